import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { agentsPartition, connectionKey, durableAgentKey, escapeId } from './keys.js';
import { queryAll, type Item } from './query.js';
import { ConnectionRecord, DurableRecord, RECORD_KIND } from './records.js';

export interface TenantAgentRecords {
  durable: DurableRecord[];
  connections: ConnectionRecord[];
  /** Items that did not parse as a record (corrupt writes); they are logged by the caller, never guessed at. */
  invalid: number;
  /** Query pages read, for metrics and for the pagination test. */
  pages: number;
}

function sortRecords(items: Item[], pages: number): TenantAgentRecords {
  const result: TenantAgentRecords = { durable: [], connections: [], invalid: 0, pages };
  for (const item of items) {
    if (item.kind === RECORD_KIND.durable) {
      const parsed = DurableRecord.safeParse(item);
      if (parsed.success) result.durable.push(parsed.data);
      else result.invalid += 1;
    } else if (item.kind === RECORD_KIND.connection) {
      const parsed = ConnectionRecord.safeParse(item);
      if (parsed.success) result.connections.push(parsed.data);
      else result.invalid += 1;
    }
  }
  return result;
}

/** Every durable and connection record of a tenant: one paginated Query (never a Scan) to the last page. */
export async function listTenantAgentRecords(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
): Promise<TenantAgentRecords> {
  const { items, pages } = await queryAll(db, {
    TableName: table,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': agentsPartition(tenantId) },
  });
  return sortRecords(items, pages);
}

/** The durable and connection records of one agent of one tenant (one Query on the agent's key prefix). */
export async function getAgentRecords(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  agentId: string,
): Promise<{ durable: DurableRecord | undefined; connection: ConnectionRecord | undefined; invalid: number }> {
  const { items, pages } = await queryAll(db, {
    TableName: table,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': agentsPartition(tenantId), ':prefix': `A#${escapeId(agentId)}#` },
  });
  const records = sortRecords(items, pages);
  return { durable: records.durable[0], connection: records.connections[0], invalid: records.invalid };
}

/** Writes (or overwrites) an agent's durable record. */
export function putDurableRecord(db: DynamoDBDocumentClient, table: string, tenantId: string, record: DurableRecord): Promise<void> {
  return putAgentItem(db, table, { ...durableAgentKey(tenantId, record.agent_id), kind: RECORD_KIND.durable, tenant_id: tenantId, ...record });
}

/** Writes (or overwrites) an agent's connection record. */
export function putConnectionRecord(db: DynamoDBDocumentClient, table: string, tenantId: string, record: ConnectionRecord): Promise<void> {
  return putAgentItem(db, table, { ...connectionKey(tenantId, record.agent_id), kind: RECORD_KIND.connection, tenant_id: tenantId, ...record });
}

async function putAgentItem(db: DynamoDBDocumentClient, table: string, item: Item): Promise<void> {
  await db.send(new PutCommand({ TableName: table, Item: item }));
}
