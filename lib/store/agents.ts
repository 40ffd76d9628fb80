import type { QueryCommandInput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EndpointScope, scopeAdmits } from '../auth/endpoint-scope.js';
import { agentSortKey, agentsPartition, connectionKey, durableAgentKey, policyKey } from '../data-format/keys.js';
import {
  type ConnectionRecord,
  type DurableRecord,
  RECORD_KIND,
  readConnectionRecord,
  readDurableRecord,
  type TenantPolicy,
} from '../data-format/records.js';
import { batchGetItems } from './batch-get.js';
import { policyFromItem } from './policy.js';
import { noteUnreadable, queryPages, type RawItem, type StoredKey } from './query.js';

/** One agent's records as the store holds them: at least one of the two. */
export interface AgentRecords {
  durable?: DurableRecord | undefined;
  connection?: ConnectionRecord | undefined;
}

/** One Query page of a tenant's agents, read and paired; the raw items are already dropped. */
export interface AgentRecordsPage {
  agents: AgentRecords[];
  /** Items of this page that are not a readable agent record (counted, never guessed at). */
  unreadable: number;
  /** The keys of the first of them (noteUnreadable), for the log line that names them. */
  unreadableKeys: StoredKey[];
  /** Agents of this page left out because they are outside the caller's endpoint scope. */
  outOfScope: number;
  /** 1 for a Query page; 0 for the last yield, which only hands over the agent held back from the last page. */
  queryPages: number;
}

/**
 * One stored item as an agent record, or undefined when it cannot be read: a kind other than the
 * two agent kinds, a record that does not read (see records.ts), or a sort key that is not the
 * key of its own `agent_id` and kind (a record filed under another agent's key).
 */
function readAgentItem(item: RawItem): { durable?: DurableRecord; connection?: ConnectionRecord; agentId: string } | undefined {
  const kind = (item.kind as { S?: unknown } | undefined)?.S;
  const sk = (item.sk as { S?: unknown } | undefined)?.S;
  if (kind === RECORD_KIND.durable) {
    const durable = readDurableRecord(item);
    if (!durable || sk !== agentSortKey(durable.agent_id, 'D')) return undefined;
    return { durable, agentId: durable.agent_id };
  }
  if (kind === RECORD_KIND.connection) {
    const connection = readConnectionRecord(item);
    if (!connection || sk !== agentSortKey(connection.agent_id, 'C')) return undefined;
    return { connection, agentId: connection.agent_id };
  }
  return undefined;
}

/**
 * A tenant's agents that `scope` admits, page by page, in sort-key order: one paginated Query
 * (never a Scan) to the last page. Each page's items are read, checked, paired, filtered and
 * dropped before the next page is read, so a scoped read holds no more than an unscoped one.
 *
 * The endpoint scope is judged here, on each agent once its records are paired (its groups are on
 * its durable record; an agent with no readable durable record has none, so only unscoped and `*`
 * callers see it): no caller of this reader can forget it, and nothing collects the tenant first.
 *
 * Invariant: every agent appears in exactly one entry, with both of its records when both are
 * readable. The two records of an agent have adjacent sort keys (`A#<id>#C`, `A#<id>#D`; an
 * escaped id holds no `#`, so no other key sorts between them), and a record whose sort key is
 * not its own is unreadable, so pairing neighbours is enough; an agent whose records straddle a
 * page boundary is held back and yielded with the next page.
 */
export async function* agentRecordPages(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  scope: EndpointScope,
  signal?: AbortSignal,
): AsyncGenerator<AgentRecordsPage, void, undefined> {
  const input: QueryCommandInput = {
    TableName: table,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': { S: agentsPartition(tenantId) } },
  };
  let held: (AgentRecords & { agentId: string }) | undefined;
  for await (const items of queryPages(db, input, signal)) {
    const agents: AgentRecords[] = [];
    const unreadable = { count: 0, keys: [] as StoredKey[] };
    let outOfScope = 0;
    for (const item of items) {
      const read = readAgentItem(item);
      if (!read) {
        noteUnreadable(unreadable, item);
      } else if (held && held.agentId === read.agentId) {
        if (read.durable) held.durable = read.durable;
        else held.connection = read.connection;
      } else {
        if (held) {
          if (scopeAdmits(scope, held.durable?.groups)) agents.push({ durable: held.durable, connection: held.connection });
          else outOfScope += 1;
        }
        held = read;
      }
    }
    // Emptied once read: a suspended generator keeps the values it last held in its registers (V8
    // saves them when it suspends), so this page's items, referenced from here and from the readers
    // below, stayed alive while the next page was parsed and were copied into the old generation
    // with it, page after page (docs/decisions.md, "The inventory's heap").
    items.length = 0;
    yield { agents, unreadable: unreadable.count, unreadableKeys: unreadable.keys, outOfScope, queryPages: 1 };
  }
  if (held) {
    const admitted = scopeAdmits(scope, held.durable?.groups);
    yield {
      agents: admitted ? [{ durable: held.durable, connection: held.connection }] : [],
      unreadable: 0,
      unreadableKeys: [],
      outOfScope: admitted ? 0 : 1,
      queryPages: 0,
    };
  }
}

/**
 * Everything a dashboard read needs besides samples, in one BatchGetItem: the tenant's policy (or
 * the default) and the agent's durable and connection records by their exact keys, with how many
 * of those records could not be read.
 */
export async function getAgentRecordsAndPolicy(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  agentId: string,
  signal?: AbortSignal,
): Promise<{
  policy: TenantPolicy;
  durable: DurableRecord | undefined;
  connection: ConnectionRecord | undefined;
  unreadable: number;
  unreadableKeys: StoredKey[];
}> {
  const policyAt = policyKey(tenantId);
  const items = await batchGetItems(
    db,
    table,
    [policyAt, durableAgentKey(tenantId, agentId), connectionKey(tenantId, agentId)],
    undefined,
    signal,
  );
  let policyItem: RawItem | undefined;
  let durable: DurableRecord | undefined;
  let connection: ConnectionRecord | undefined;
  const unreadable = { count: 0, keys: [] as StoredKey[] };
  for (const item of items) {
    if ((item.pk as { S?: unknown } | undefined)?.S === policyAt.pk) {
      policyItem = item;
      continue;
    }
    const read = readAgentItem(item);
    if (!read || read.agentId !== agentId) noteUnreadable(unreadable, item);
    else if (read.durable) durable = read.durable;
    else connection = read.connection;
  }
  return { policy: policyFromItem(policyItem), durable, connection, unreadable: unreadable.count, unreadableKeys: unreadable.keys };
}
