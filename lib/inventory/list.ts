import type { EndpointScope } from '../auth/endpoint-scope.js';
import type { Settings } from '../config.js';
import type { AgentSummary } from '../contract/schemas.js';
import { dependencyFailure } from '../errors.js';
import { jsonArrayBody, responseCoding, StreamedResponseTooLargeError, type StreamedResult } from '../json-array-stream.js';
import { logger } from '../observability/logger.js';
import { recordItemsReturned, recordUnreadableRecords } from '../observability/metrics.js';
import { JSON_HEADERS } from '../responses.js';
import type { AgentRecordsPage } from '../store/agents.js';
import { addNamedKeys, type StoredKey } from '../store/query.js';
import type { TenantReads } from '../store/tenant-client.js';
import { summarizeAgent } from './merge.js';
import { inventoryPages } from './scoped-pages.js';

/** Where a function reads the inventory: its tenants' clients, the data table, and how an agent is judged. */
export interface InventorySource {
  reads: TenantReads;
  cfg: Pick<Settings, 'dataTable' | 'onlineGraceSeconds' | 'scopeClaim'>;
}

/**
 * GET /api/agents (listEndpointInventory) for a tenant at `now`, streamed: the agents the caller's
 * endpoint scope admits (the whole tenant for an unscoped or `*` caller; inventoryPages) as one
 * JSON array in the store's sort-key order of the agents' records (lib/data-format/keys.ts
 * agentSortKey, compared as UTF-8 bytes), compressed as the client prefers (br or gzip; responseCoding).
 *
 * The tenant is read page by page (one paginated Query, never a Scan); each page's agents are
 * summarised, serialized and written into the body as the page arrives, and dropped before the
 * next: nothing holds the whole tenant, as records or as text, and nothing sorts it.
 *
 * Invariants: the first page is read before this resolves, so a store failing up front throws
 * (502/503/504) before any status is sent, never `200 []`, and so does the 403 of a caller
 * without the scope claim at a tenant that requires one; a failure after that (a later page, or
 * an answer that would pass Lambda's 200 MB streamed limit) destroys the body, which then ends
 * without its `]` (and its compressed stream's end): a broken transfer, never a shorter valid array. Unreadable
 * records are known only at the end of the stream, after the headers are gone: they are never
 * silent all the same (warning log, `UnreadableRecords` metric and its alarm).
 */
export async function listInventoryResponse(
  { reads, cfg }: InventorySource,
  tenantId: string,
  scope: EndpointScope,
  now: Date,
  acceptEncoding: string | undefined,
  signal?: AbortSignal,
): Promise<StreamedResult> {
  const options = { now, onlineGraceSeconds: cfg.onlineGraceSeconds };
  const coding = responseCoding(acceptEncoding);
  // The request's log keys (tenant, correlation ids) are reset when the handler returns, before the body is read.
  const log = logger.createChild();
  let pages: AsyncGenerator<AgentRecordsPage, void, undefined>;
  let first: IteratorResult<AgentRecordsPage, void>;
  try {
    pages = inventoryPages(await reads.forTenant(tenantId, signal), cfg, tenantId, scope, signal);
    first = await pages.next();
  } catch (error) {
    throw dependencyFailure(error, 'inventory store');
  }
  const tally = { agents: 0, unreadable: 0, unreadableKeys: [] as StoredKey[], outOfScope: 0, queryPages: 0 };

  async function* summaryBatches(): AsyncGenerator<string[], void, undefined> {
    let page = first;
    first = { done: true, value: undefined }; // the first page is not kept for the whole stream
    while (!page.done) {
      tally.queryPages += page.value.queryPages;
      tally.unreadable += page.value.unreadable;
      addNamedKeys(tally.unreadableKeys, page.value.unreadableKeys);
      tally.outOfScope += page.value.outOfScope;
      const batch = page.value.agents.map((agent) => JSON.stringify(summarizeAgent(agent.durable, agent.connection, options)));
      // The page's records, no longer needed: emptied, not dropped, for the reason agentRecordPages empties its items.
      page.value.agents.length = 0;
      tally.agents += batch.length;
      yield batch;
      try {
        page = await pages.next();
      } catch (error) {
        throw dependencyFailure(error, 'inventory store');
      }
    }
    if (tally.unreadable > 0) {
      log.warn('left out stored agent records that cannot be read', { unreadableRecords: tally.unreadable, keys: tally.unreadableKeys });
    }
    recordUnreadableRecords(tally.unreadable);
    recordItemsReturned(tally.agents);
    log.info('inventory listed', {
      agents: tally.agents,
      scope: scope.kind,
      outOfScope: tally.outOfScope,
      queryPages: tally.queryPages,
      unreadableRecords: tally.unreadable,
      coding,
    });
  }

  const body = jsonArrayBody(summaryBatches(), { coding });
  // A body closed early (the client went away, a failure) must not leave the prefetched page unawaited.
  body.once('close', () => void pages.return(undefined).catch(() => undefined));
  body.once('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE') {
      log.info('the client went away before the inventory was sent; reading stopped', {
        agentsSent: tally.agents,
        queryPages: tally.queryPages,
      });
      return;
    }
    const tooLarge = error instanceof StreamedResponseTooLargeError;
    log.error(
      tooLarge ? 'inventory stream stopped before passing the streamed-response limit' : 'inventory stream aborted after its first byte',
      {
        reason: error.message,
        coding,
        agentsSent: tally.agents,
        queryPages: tally.queryPages,
        ...(tooLarge && coding === 'identity'
          ? { hint: 'the client accepted neither br nor gzip; with Accept-Encoding: br or gzip the list is about five times smaller' }
          : {}),
      },
    );
  });
  const headers: Record<string, string> = { ...JSON_HEADERS, Vary: 'Accept-Encoding' };
  if (coding !== 'identity') headers['Content-Encoding'] = coding;
  return { statusCode: 200, headers, body };
}

/**
 * The tenant's inventory as the same read gives it (the same endpoint scope and 403), one summary
 * at a time in the order the pages bring them, for callers that select rather than send it all
 * (the MCP door's `list_endpoints`).
 * `visit` returns false to stop: no further page is read (`complete` is then false), so a caller
 * that has what it needs costs only the pages up to there. A failed read throws (502/503/504)
 * before `visit` has seen a partial tenant as whole; unreadable records are counted, logged and in
 * the metric, as for the inventory.
 */
export async function forEachInventoryAgent(
  { reads, cfg }: InventorySource,
  tenantId: string,
  scope: EndpointScope,
  now: Date,
  visit: (agent: AgentSummary) => boolean | undefined,
  signal?: AbortSignal,
): Promise<{ agents: number; unreadable: number; complete: boolean }> {
  const options = { now, onlineGraceSeconds: cfg.onlineGraceSeconds };
  let agents = 0;
  let unreadable = 0;
  const unreadableKeys: StoredKey[] = [];
  let complete = true;
  try {
    pages: for await (const page of inventoryPages(await reads.forTenant(tenantId, signal), cfg, tenantId, scope, signal)) {
      unreadable += page.unreadable;
      addNamedKeys(unreadableKeys, page.unreadableKeys);
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
  if (unreadable > 0)
    logger.warn('left out stored agent records that cannot be read', { unreadableRecords: unreadable, keys: unreadableKeys });
  recordUnreadableRecords(unreadable);
  return { agents, unreadable, complete };
}
