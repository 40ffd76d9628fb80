import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
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

/** How long a new table may take to become ACTIVE (seconds; an engine is at once, AWS takes a few). */
const TABLE_ACTIVE_WITHIN_SECONDS = 60;

async function ensureTable(
  client: AnyClient,
  tableName: string,
  ttlAttribute: string | undefined,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const low = client as DynamoDBClient;
  const options = signal ? { abortSignal: signal } : {};
  let created = false;
  try {
    await low.send(new CreateTableCommand(tableDefinition(tableName)), options);
    created = true;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
  }
  try {
    // The SDK's waiter: DescribeTable with backoff until ACTIVE, the time is up, or `signal` fires.
    await waitUntilTableExists(
      { client: low, minDelay: 0.1, maxDelay: 2, maxWaitTime: TABLE_ACTIVE_WITHIN_SECONDS, ...(signal ? { abortSignal: signal } : {}) },
      { TableName: tableName },
    );
  } catch (error) {
    signal?.throwIfAborted();
    // The waiter's own message is a JSON dump of every answer it saw: say it in one sentence.
    throw new Error(`table ${tableName} did not become active within ${TABLE_ACTIVE_WITHIN_SECONDS} s`, { cause: error });
  }
  if (created && ttlAttribute) {
    try {
      await low.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
        }),
        options,
      );
    } catch {
      // dynalite has no TTL; reads ignore samples past retention anyway (TTL deletion lags on AWS too).
    }
  }
  return created;
}

/**
 * Creates the data and audit tables when missing (local stack and seed CLI) and returns once both
 * are ACTIVE; idempotent. Fails when a table is not ACTIVE within a minute, or when `signal` fires.
 */
export async function ensureTables(
  client: AnyClient,
  tables: { dataTable: string; auditTable: string },
  signal?: AbortSignal,
): Promise<{ created: string[] }> {
  const created: string[] = [];
  if (await ensureTable(client, tables.dataTable, TTL_ATTRIBUTE, signal)) created.push(tables.dataTable);
  if (await ensureTable(client, tables.auditTable, undefined, signal)) created.push(tables.auditTable);
  return { created };
}
