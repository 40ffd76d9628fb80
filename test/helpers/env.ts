import { resetConfig } from '../../lib/config.js';
import { setDynamo } from '../../lib/store/client.js';
import type { TestEngine } from './engine.js';

/** Points the service's configuration and DynamoDB client at a test engine and its tables. */
export function useEngine(engine: TestEngine, extra: Record<string, string> = {}): void {
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: engine.endpoint,
    DATA_TABLE: engine.tables.dataTable,
    AUDIT_TABLE: engine.tables.auditTable,
    ...extra,
  });
  resetConfig();
  setDynamo(undefined);
}
