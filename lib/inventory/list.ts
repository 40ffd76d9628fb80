import type { AgentSummary } from '../contract/schemas.js';
import { config } from '../config.js';
import { dependencyFailure } from '../errors.js';
import { JsonArrayStream, LAMBDA_RESPONSE_LIMIT_BYTES, type JsonResult } from '../http.js';
import { logger } from '../observability/logger.js';
import { recordItemsReturned, recordUnreadableRecords } from '../observability/metrics.js';
import { agentRecordPages } from '../store/agents.js';
import { tenantDynamo } from '../store/tenant-client.js';
import { summarizeAgent } from './merge.js';

/** The response header that counts the tenant's stored agent records that could not be read. */
export const UNREADABLE_RECORDS_HEADER = 'X-Unreadable-Records';

/**
 * GET /api/agents (listEndpointInventory) for a tenant at `now`: the whole inventory as one JSON
 * array ordered by agent_id, gzip-compressed for clients that accept it, with
 * `X-Unreadable-Records` counting the stored records left out.
 *
 * The tenant is read page by page (one paginated Query, never a Scan); each agent is summarised
 * and serialized as its page arrives and written straight into the compressor, and each page's
 * items are dropped before the next: nothing holds the whole tenant, as records or as text.
 *
 * Invariants: a failed read throws (502/503/504), never `200 []`; a success fits what Lambda may
 * return (6 MiB as Lambda measures it), and a larger inventory is a 406 (when gzip would fit) or a
 * 507 naming the size and what to do, never a cut list; unreadable records are never silent
 * (header, warning log, `UnreadableRecords` metric).
 */
export async function listInventoryResponse(tenantId: string, now: Date, acceptEncoding: string | undefined, signal?: AbortSignal): Promise<JsonResult> {
  const cfg = config();
  const options = { now, onlineGraceSeconds: cfg.onlineGraceSeconds };
  const array = new JsonArrayStream({ acceptEncoding, keyOf: (element) => (element as AgentSummary).agent_id });
  let unreadable = 0;
  let pages = 0;
  try {
    for await (const page of agentRecordPages(await tenantDynamo(tenantId, signal), cfg.dataTable, tenantId, signal)) {
      pages += page.queryPages;
      unreadable += page.unreadable;
      for (const agent of page.agents) {
        const summary = summarizeAgent(agent.durable, agent.connection, options);
        array.add(summary.agent_id, JSON.stringify(summary));
      }
      await array.drained();
    }
  } catch (error) {
    array.dispose();
    throw dependencyFailure(error, 'inventory store');
  }
  const agents = array.length;
  if (unreadable > 0) logger.warn('left out stored agent records that cannot be read', { unreadableRecords: unreadable });
  recordUnreadableRecords('listEndpointInventory', unreadable);
  const response = await array.respond(200, {
    headers: { [UNREADABLE_RECORDS_HEADER]: String(unreadable) },
    tooLarge: (bytes) => {
      const fit = Math.floor((agents * LAMBDA_RESPONSE_LIMIT_BYTES) / bytes);
      return (
        `This tenant's inventory is too large for one response: its ${agents} endpoints take ` +
        `${(bytes / 1_048_576).toFixed(1)} MiB even compressed, and a response may carry at most 6 MiB ` +
        `(about ${fit} endpoints like these). Ask the service operator to split the tenant; retrying will not help.`
      );
    },
  });
  logger.info('inventory listed', { agents, queryPages: pages, unreadableRecords: unreadable, bytes: response.body.length });
  recordItemsReturned('listEndpointInventory', agents);
  return response;
}

/**
 * The tenant's inventory as the same read gives it, one summary at a time in the order the pages
 * bring them, for callers that select rather than send it all (the MCP door's `list_endpoints`).
 * `visit` returns false to stop: no further page is read (`complete` is then false), so a caller
 * that has what it needs costs only the pages up to there. A failed read throws (502/503/504)
 * before `visit` has seen a partial tenant as whole; unreadable records are counted, logged and in
 * the metric, as for the inventory.
 */
export async function forEachInventoryAgent(
  tenantId: string,
  now: Date,
  visit: (agent: AgentSummary) => boolean | void,
  signal?: AbortSignal,
): Promise<{ agents: number; unreadable: number; complete: boolean }> {
  const cfg = config();
  const options = { now, onlineGraceSeconds: cfg.onlineGraceSeconds };
  let agents = 0;
  let unreadable = 0;
  let complete = true;
  try {
    pages: for await (const page of agentRecordPages(await tenantDynamo(tenantId, signal), cfg.dataTable, tenantId, signal)) {
      unreadable += page.unreadable;
      for (const agent of page.agents) {
        agents += 1;
        if (visit(summarizeAgent(agent.durable, agent.connection, options)) === false) {
          complete = false;
          break pages;
        }
      }
    }
  } catch (error) {
    throw dependencyFailure(error, 'inventory store');
  }
  if (unreadable > 0) logger.warn('left out stored agent records that cannot be read', { unreadableRecords: unreadable });
  recordUnreadableRecords('listEndpointInventory', unreadable);
  return { agents, unreadable, complete };
}
