import { config } from '../config.js';
import { dependencyFailure } from '../errors.js';
import { LAMBDA_RESPONSE_LIMIT_BYTES, negotiatedJsonArrayResponse, type JsonResult } from '../http.js';
import { logger } from '../observability/logger.js';
import { recordItemsReturned, recordUnreadableRecords } from '../observability/metrics.js';
import { agentRecordPages } from '../store/agents.js';
import { dynamo } from '../store/client.js';
import { InventoryBuilder } from './merge.js';

/** The response header that counts the tenant's stored agent records that could not be read. */
export const UNREADABLE_RECORDS_HEADER = 'X-Unreadable-Records';

/** The inventory of a tenant, serialized: the parts of the JSON array, in order. */
export interface InventoryListing {
  /** One serialized AgentSummary per endpoint, ordered by agent_id. */
  parts: string[];
  /** Stored agent records that could not be read (left out, counted, never guessed at). */
  unreadable: number;
  /** Query pages read. */
  pages: number;
}

/**
 * listEndpointInventory's read: every agent of the tenant at `now`, read page by page and
 * summarised as each page arrives (a page's items are dropped before the next is read). A failed
 * read throws (502/503/504), so it can never turn into `200 []`.
 */
export async function listInventory(tenantId: string, now: Date): Promise<InventoryListing> {
  const cfg = config();
  const builder = new InventoryBuilder({ now, onlineGraceSeconds: cfg.onlineGraceSeconds });
  let unreadable = 0;
  let pages = 0;
  try {
    for await (const page of agentRecordPages(dynamo(), cfg.dataTable, tenantId)) {
      pages += page.queryPages;
      unreadable += page.unreadable;
      for (const agent of page.agents) builder.add(agent);
    }
  } catch (error) {
    throw dependencyFailure(error, 'inventory store');
  }
  return { parts: builder.finish(), unreadable, pages };
}

/**
 * GET /api/agents for a tenant at `now`: the whole inventory as one JSON array, gzip-compressed
 * for clients that accept it, with `X-Unreadable-Records` counting the stored records left out.
 *
 * Invariants: a success fits what Lambda may return (6 MiB as Lambda measures it); a larger
 * inventory is a 406 (when gzip would fit) or a 507 naming the size and what to do, never a cut
 * list; unreadable records are never silent (header, warning log, `UnreadableRecords` metric).
 */
export async function listInventoryResponse(tenantId: string, now: Date, acceptEncoding: string | undefined): Promise<JsonResult> {
  const listing = await listInventory(tenantId, now);
  const agents = listing.parts.length;
  if (listing.unreadable > 0) {
    logger.warn('left out stored agent records that cannot be read', { unreadableRecords: listing.unreadable });
  }
  recordUnreadableRecords('listEndpointInventory', listing.unreadable);
  const response = await negotiatedJsonArrayResponse(200, listing.parts, acceptEncoding, {
    headers: { [UNREADABLE_RECORDS_HEADER]: String(listing.unreadable) },
    tooLarge: (bytes) => {
      const fit = Math.floor((agents * LAMBDA_RESPONSE_LIMIT_BYTES) / bytes);
      return (
        `This tenant's inventory is too large for one response: its ${agents} endpoints take ` +
        `${(bytes / 1_048_576).toFixed(1)} MiB even compressed, and a response may carry at most 6 MiB ` +
        `(about ${fit} endpoints like these). Ask the service operator to split the tenant; retrying will not help.`
      );
    },
  });
  logger.info('inventory listed', { agents, queryPages: listing.pages, unreadableRecords: listing.unreadable, bytes: response.body.length });
  recordItemsReturned('listEndpointInventory', agents);
  return response;
}
