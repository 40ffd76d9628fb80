import { join } from 'node:path';
import {
  type AttributeDefinition,
  CreateTableCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ROOT } from '../infra/build.js';
import { readTemplateSource } from './template-sources.js';

/**
 * The data and audit tables on the stack's engine, made as the template makes them: their keys,
 * billing mode and TTL are read from infra/tables.yml (the resources serverless.yml deploys), never
 * from a second definition that could drift; only the names are the stack's (DATA_TABLE, AUDIT_TABLE).
 */

/** What the stack takes of a table of infra/tables.yml. */
export interface TableDefinition {
  keySchema: KeySchemaElement[];
  attributeDefinitions: AttributeDefinition[];
  billingMode: 'PAY_PER_REQUEST' | 'PROVISIONED';
  /** The attribute DynamoDB's TTL reads, when the table has TTL on. */
  ttlAttribute: string | undefined;
}

interface TableResource {
  Type: string;
  Properties: {
    KeySchema: KeySchemaElement[];
    AttributeDefinitions: AttributeDefinition[];
    BillingMode?: 'PAY_PER_REQUEST' | 'PROVISIONED';
    TimeToLiveSpecification?: { AttributeName: string; Enabled: boolean };
  };
}

/** The template's two tables (`DataTable`, `AuditTable` in infra/tables.yml). */
export function templateTables(file = join(ROOT, 'infra', 'tables.yml')): { data: TableDefinition; audit: TableDefinition } {
  const resources = readTemplateSource<{ Resources: Record<string, TableResource> }>(file).Resources;
  const definition = (logicalId: string): TableDefinition => {
    const table = resources[logicalId];
    if (table?.Type !== 'AWS::DynamoDB::Table') throw new Error(`infra/tables.yml declares no table ${logicalId}`);
    const ttl = table.Properties.TimeToLiveSpecification;
    return {
      keySchema: table.Properties.KeySchema,
      attributeDefinitions: table.Properties.AttributeDefinitions,
      billingMode: table.Properties.BillingMode ?? 'PROVISIONED',
      ttlAttribute: ttl?.Enabled ? ttl.AttributeName : undefined,
    };
  };
  return { data: definition('DataTable'), audit: definition('AuditTable') };
}

/** How long a new table may take to become ACTIVE (seconds; an engine is at once, AWS takes a few). */
const TABLE_ACTIVE_WITHIN_SECONDS = 60;

async function ensureTable(
  client: DynamoDBClient,
  name: string,
  table: TableDefinition,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const options = signal ? { abortSignal: signal } : {};
  let created = false;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        KeySchema: table.keySchema,
        AttributeDefinitions: table.attributeDefinitions,
        BillingMode: table.billingMode,
        ...(table.billingMode === 'PROVISIONED' ? { ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 } } : {}),
      }),
      options,
    );
    created = true;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
  }
  try {
    // The SDK's waiter: DescribeTable with backoff until ACTIVE, the time is up, or `signal` fires.
    await waitUntilTableExists(
      { client, minDelay: 0.1, maxDelay: 2, maxWaitTime: TABLE_ACTIVE_WITHIN_SECONDS, ...(signal ? { abortSignal: signal } : {}) },
      { TableName: name },
    );
  } catch (error) {
    signal?.throwIfAborted();
    // The waiter's own message is a JSON dump of every answer it saw: say it in one sentence.
    throw new Error(`table ${name} did not become active within ${TABLE_ACTIVE_WITHIN_SECONDS} s`, { cause: error });
  }
  if (created && table.ttlAttribute) {
    try {
      await client.send(
        new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: table.ttlAttribute, Enabled: true } }),
        options,
      );
    } catch {
      // dynalite has no TTL; reads ignore samples past retention anyway (TTL deletion lags on AWS too).
    }
  }
  return created;
}

/**
 * Creates the data and audit tables when missing (the stack, `npm run seed` into a local engine)
 * and returns once both are ACTIVE; idempotent. Fails when a table is not ACTIVE within a minute,
 * or when `signal` fires. Table operations pass through a document client unchanged.
 */
export async function ensureTables(
  client: DynamoDBClient | DynamoDBDocumentClient,
  tables: { dataTable: string; auditTable: string },
  signal?: AbortSignal,
): Promise<{ created: string[] }> {
  const low = client as DynamoDBClient;
  const { data, audit } = templateTables();
  const created: string[] = [];
  if (await ensureTable(low, tables.dataTable, data, signal)) created.push(tables.dataTable);
  if (await ensureTable(low, tables.auditTable, audit, signal)) created.push(tables.auditTable);
  return { created };
}
