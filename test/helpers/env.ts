import { vi } from 'vitest';
import type { TestEngine } from './engine.js';
import { FUNCTION_ENVIRONMENT } from './function-environment.js';

/**
 * The service's modules read their configuration, and make their clients, when they load (as a
 * Lambda function does at init). A test that calls them in-process sets its variables here and
 * then imports the handler or use case it calls (`await import(…)`): the variables are stubbed
 * (vitest's stubEnv) on top of FUNCTION_ENVIRONMENT and the module registry is reset, so the
 * modules load again with them, as a new instance with a changed configuration would.
 */
export function useEnvironment(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries({ ...FUNCTION_ENVIRONMENT, ...env })) vi.stubEnv(name, value);
  vi.resetModules();
}

/** useEnvironment with a test engine's endpoint and tables, and `extra` variables. */
export function useEngine(engine: Pick<TestEngine, 'endpoint' | 'tables'>, extra: Record<string, string | undefined> = {}): void {
  useEnvironment({
    DYNAMODB_ENDPOINT: engine.endpoint,
    DATA_TABLE: engine.tables.dataTable,
    AUDIT_TABLE: engine.tables.auditTable,
    ...extra,
  });
}
