import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/store/client.js';
import { startEmbeddedEngine } from '../../local/engine.js';
import { ensureTables } from '../../local/tables.js';

/**
 * A real DynamoDB API for a test file: the embedded dynalite engine on a free port, or, when
 * TEST_DYNAMODB_ENDPOINT is set (npm run test:dynamodb-local), that engine (AWS's DynamoDB Local).
 * Table names are unique per call, so files sharing one engine never see each other's data.
 */
export interface TestEngine {
  endpoint: string;
  db: DynamoDBDocumentClient;
  tables: { dataTable: string; auditTable: string };
  /** Which engine this is, for test names and messages. */
  kind: 'dynalite' | 'external';
  close(): Promise<void>;
}

export function documentClient(endpoint: string, extra: { maxAttempts?: number; timeoutMs?: number } = {}): DynamoDBDocumentClient {
  return createDocumentClient({ region: 'us-east-1', endpoint, maxAttempts: extra.maxAttempts ?? 3, timeoutMs: extra.timeoutMs ?? 5000 });
}

export function uniqueTables(): { dataTable: string; auditTable: string } {
  const id = randomUUID().slice(0, 8);
  return { dataTable: `test-data-${id}`, auditTable: `test-audit-${id}` };
}

export async function startTestEngine(options: { createTables?: boolean } = {}): Promise<TestEngine> {
  const external = process.env.TEST_DYNAMODB_ENDPOINT;
  const engine = external ? undefined : await startEmbeddedEngine({ port: 0 });
  const endpoint = external ?? engine!.endpoint;
  const db = documentClient(endpoint);
  const tables = uniqueTables();
  if (options.createTables ?? true) await ensureTables(db, tables);
  return {
    endpoint,
    db,
    tables,
    kind: external ? 'external' : 'dynalite',
    async close() {
      db.destroy();
      await engine?.close();
    },
  };
}
