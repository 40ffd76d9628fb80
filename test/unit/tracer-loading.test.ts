import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * When an instance loads Powertools Tracer (lib/observability/tracer.ts), read from what a client
 * handed to `traced` carries: the X-Ray SDK's middleware once the tracer is loaded. The module is
 * loaded afresh for each case, in Lambda's environment (Tracer does nothing outside Lambda), with
 * the initialization type Lambda sets for the instance. What reaches X-Ray from sampled and
 * unsampled invocations is in test/e2e/tracing.test.ts.
 */
const XRAY_MIDDLEWARE = 'XRaySDKInstrumentation';

async function tracerModuleIn(initializationType: string) {
  vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs24.x');
  vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'endpoint-read-service-test-mcp');
  vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', initializationType);
  vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'true');
  vi.resetModules();
  // As the runtime's import of the handler: its init is done when the import is.
  return import('../../lib/observability/tracer.js');
}
const captured = (client: DynamoDBClient): boolean => client.middlewareStack.identify().some((name) => name.startsWith(XRAY_MIDDLEWARE));

describe('Tracer: when an instance loads it', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('an instance of provisioned concurrency loads it during its init: a client is traced before any request', async () => {
    const { traced } = await tracerModuleIn('provisioned-concurrency');

    expect(captured(traced(new DynamoDBClient({ region: 'us-east-1' })))).toBe(true);
  });

  it('an on-demand instance does not: its clients wait for its first sampled invocation', async () => {
    const { traced } = await tracerModuleIn('on-demand');

    expect(captured(traced(new DynamoDBClient({ region: 'us-east-1' })))).toBe(false);
  });
});
