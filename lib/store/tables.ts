import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Table operations pass through a document client unchanged, so either client will do. */
type AnyClient = DynamoDBClient | DynamoDBDocumentClient;

/** Attribute holding a sample's expiry (epoch seconds) for DynamoDB TTL. */
export const TTL_ATTRIBUTE = 'ttl';

/** Both tables share one key shape: string partition key `pk` and string sort key `sk`. */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
  };
}

async function waitActive(client: AnyClient, tableName: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { Table } = await (client as DynamoDBClient).send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`table ${tableName} did not become active`);
}

async function ensureTable(client: AnyClient, tableName: string, ttlAttribute?: string): Promise<boolean> {
  let created = false;
  try {
    await (client as DynamoDBClient).send(new CreateTableCommand(tableDefinition(tableName)));
    created = true;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
  }
  await waitActive(client, tableName);
  if (created && ttlAttribute) {
    try {
      await (client as DynamoDBClient).send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
        }),
      );
    } catch {
      // dynalite has no TTL; reads ignore samples past retention anyway (TTL deletion lags on AWS too).
    }
  }
  return created;
}

/** Creates the data and audit tables when missing (local stack and seed CLI); idempotent. */
export async function ensureTables(
  client: AnyClient,
  tables: { dataTable: string; auditTable: string },
): Promise<{ created: string[] }> {
  const created: string[] = [];
  if (await ensureTable(client, tables.dataTable, TTL_ATTRIBUTE)) created.push(tables.dataTable);
  if (await ensureTable(client, tables.auditTable)) created.push(tables.auditTable);
  return { created };
}
