import type { Context } from 'aws-lambda';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

// Metrics and Logger read their switches when they are created: turn both on for this file
// (vitest.config.ts may silence them for the other tests) before the modules load.
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
process.env.POWERTOOLS_DEV = 'false';
delete process.env.POWERTOOLS_METRICS_NAMESPACE;
delete process.env.POWERTOOLS_SERVICE_NAME;

type Middy = typeof import('@middy/core').default;
let middy: Middy;
let observability: typeof import('../../lib/middleware/observability.js').observability;
let authorizerObservability: typeof import('../../lib/middleware/observability.js').authorizerObservability;
let failureHandling: typeof import('../../lib/middleware/failures.js').failureHandling;
let HANDLER_OPTIONS: typeof import('../../lib/middleware/failures.js').HANDLER_OPTIONS;
let metricsModule: typeof import('../../lib/observability/metrics.js');
let errors: typeof import('../../lib/errors.js');
let logger: typeof import('../../lib/observability/logger.js').logger;

beforeAll(async () => {
  middy = (await import('@middy/core')).default;
  ({ observability, authorizerObservability } = await import('../../lib/middleware/observability.js'));
  ({ failureHandling, HANDLER_OPTIONS } = await import('../../lib/middleware/failures.js'));
  metricsModule = await import('../../lib/observability/metrics.js');
  errors = await import('../../lib/errors.js');
  ({ logger } = await import('../../lib/observability/logger.js'));
});

interface EmfBlob {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

let stdout: string[] = [];
let stderr: string[] = [];

beforeEach(() => {
  stdout = [];
  stderr = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  // 5xx failures are logged at ERROR, on stderr: kept out of the test output, and read where it matters.
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

function lines(): Array<Record<string, unknown>> {
  return stdout
    .join('')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function emfLines(): EmfBlob[] {
  return lines().filter((l) => '_aws' in l) as unknown as EmfBlob[];
}

function logLines(): Array<Record<string, unknown>> {
  return lines().filter((l) => !('_aws' in l));
}

function context(awsRequestId: string): Context {
  return {
    awsRequestId,
    functionName: 'endpoint-read-service-test-inventory',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:endpoint-read-service-test-inventory',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/endpoint-read-service-test-inventory',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

const event = { requestContext: { requestId: 'api-gw-request-1' } };

function handlerThat(
  body: () => Promise<unknown>,
  operation: 'listEndpointInventory' | 'getEndpointObservations' | 'mcp' = 'listEndpointInventory',
) {
  return middy(HANDLER_OPTIONS).use(observability({ operation })).use(failureHandling()).handler(body);
}

/** A promise and the function that resolves it: lets two requests take turns. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('Middleware: observability', () => {
  it('writes exactly one EMF line per request, with the request count and latency', async () => {
    const handler = handlerThat(async () => ({ statusCode: 200, body: '[]' }));

    await handler(event, context('req-ok-1'));
    await handler(event, context('req-ok-2'));

    const blobs = emfLines();
    expect(blobs).toHaveLength(2);
    for (const blob of blobs) {
      const [definition] = blob._aws.CloudWatchMetrics;
      expect(definition!.Namespace).toBe(metricsModule.METRICS_NAMESPACE);
      expect(definition!.Dimensions).toEqual([['service', 'operation']]);
      expect(definition!.Metrics.map((m) => m.Name).sort()).toEqual(['Latency', 'Requests']);
      expect(blob).toMatchObject({ service: 'endpoint-read-service', operation: 'listEndpointInventory', Requests: 1, statusCode: '200' });
      expect(typeof blob.Latency).toBe('number');
    }
  });

  it('counts a refused request as a 4xx failure, after the failure middlewares mapped it', async () => {
    const handler = handlerThat(async () => {
      throw new errors.NotFoundError('No such endpoint.');
    });

    const response = (await handler(event, context('req-404'))) as { statusCode: number };

    expect(response.statusCode).toBe(404);
    const [blob] = emfLines();
    expect(emfLines()).toHaveLength(1);
    expect(blob).toMatchObject({ Requests: 1, Failures4xx: 1, statusCode: '404' });
    expect(blob).not.toHaveProperty('Failures5xx');
  });

  it('counts an unexpected error as a 5xx failure', async () => {
    const handler = handlerThat(async () => {
      throw new Error('boom');
    });

    const response = (await handler(event, context('req-500'))) as { statusCode: number };

    expect(response.statusCode).toBe(500);
    expect(emfLines()).toHaveLength(1);
    expect(emfLines()[0]).toMatchObject({ Requests: 1, Failures5xx: 1, statusCode: '500' });
  });

  it('puts what the use case records (items returned, audit writes) into the same line', async () => {
    const handler = handlerThat(async () => {
      metricsModule.recordItemsReturned('listEndpointInventory', 7);
      metricsModule.recordAuditWrite('ok');
      metricsModule.recordAuditWrite('failed');
      metricsModule.recordAuditWrite('ok');
      return { statusCode: 200, body: '[]' };
    });

    await handler(event, context('req-items'));

    expect(emfLines()).toHaveLength(1);
    expect(emfLines()[0]).toMatchObject({ ItemsReturned: 7, AuditWrites: [1, 1], AuditWriteFailures: 1, Requests: 1 });
    expect(emfLines()[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'operation']]);
  });

  it('puts the counts of unreadable stored records and samples into the same line, 0 included (alarms need data points)', async () => {
    const handler = handlerThat(async () => {
      metricsModule.recordUnreadableRecords('listEndpointInventory', 3);
      return { statusCode: 200, body: '[]' };
    });
    const clean = handlerThat(async () => {
      metricsModule.recordUnreadableRecords('listEndpointInventory', 0);
      metricsModule.recordUnreadableSamples(2);
      return { statusCode: 200, body: '[]' };
    });

    await handler(event, context('req-unreadable'));
    await clean(event, context('req-clean'));

    expect(emfLines()).toHaveLength(2);
    expect(emfLines()[0]).toMatchObject({ UnreadableRecords: 3, Requests: 1 });
    expect(emfLines()[1]).toMatchObject({ UnreadableRecords: 0, UnreadableSamples: 2 });
  });

  it('keeps the metrics of two requests in flight at once in one process apart, each in its own line', async () => {
    // The local stack's case: the MCP door's request is in flight while the observations request it made runs.
    const mcpRecorded = gate();
    const observationsRecorded = gate();
    const mcp = handlerThat(async () => {
      metricsModule.recordToolCall('observations', false);
      mcpRecorded.open();
      await observationsRecorded.opened;
      metricsModule.recordItemsReturned('mcp', 3);
      return { statusCode: 200, body: '{}' };
    }, 'mcp');
    const observations = handlerThat(async () => {
      await mcpRecorded.opened;
      metricsModule.recordAuditWrite('ok');
      observationsRecorded.open();
      return { statusCode: 200, body: '{}' };
    }, 'getEndpointObservations');

    await Promise.all([mcp(event, context('req-mcp')), observations(event, context('req-observations'))]);

    const byOperation = Object.fromEntries(emfLines().map((blob) => [blob.operation, blob]));
    expect(emfLines()).toHaveLength(2);
    expect(byOperation.mcp).toMatchObject({ Requests: 1, ToolCalls: 1, ItemsReturned: 3, tool: 'observations' });
    expect(byOperation.mcp).not.toHaveProperty('AuditWrites');
    expect(byOperation.getEndpointObservations).toMatchObject({ Requests: 1, AuditWrites: 1 });
    expect(byOperation.getEndpointObservations).not.toHaveProperty('ToolCalls');
    expect(stderr.join('') + stdout.join('')).not.toContain('has already been added');
  });

  it('keeps the metrics of a request apart from those of a request it calls in-process', async () => {
    const inner = handlerThat(async () => {
      metricsModule.recordAuditWrite('ok');
      return { statusCode: 200, body: '{}' };
    }, 'getEndpointObservations');
    const outer = handlerThat(async () => {
      metricsModule.recordToolCall('observations', false);
      await inner(event, context('req-inner'));
      metricsModule.recordItemsReturned('mcp', 2);
      return { statusCode: 200, body: '{}' };
    }, 'mcp');

    await outer(event, context('req-outer'));
    await handlerThat(async () => ({ statusCode: 200, body: '[]' }))(event, context('req-next'));

    const [innerLine, outerLine, nextLine] = emfLines();
    expect(emfLines()).toHaveLength(3);
    expect(innerLine).toMatchObject({ operation: 'getEndpointObservations', Requests: 1, AuditWrites: 1 });
    expect(outerLine).toMatchObject({ operation: 'mcp', Requests: 1, ToolCalls: 1, ItemsReturned: 2 });
    expect(outerLine).not.toHaveProperty('AuditWrites');
    expect(nextLine!._aws.CloudWatchMetrics[0]!.Metrics.map((m) => m.Name).sort()).toEqual(['Latency', 'Requests']);
    expect(stderr.join('') + stdout.join('')).not.toContain('has already been added');
  });

  it("publishes what is recorded outside any request at once, never in the next request's line", async () => {
    metricsModule.recordKeySetFailure();
    await handlerThat(async () => ({ statusCode: 200, body: '[]' }))(event, context('req-after'));

    const [alone, request] = emfLines();
    expect(emfLines()).toHaveLength(2);
    expect(alone).toMatchObject({ KeySetFailures: 1 });
    expect(alone).not.toHaveProperty('Requests');
    expect(request).toMatchObject({ operation: 'listEndpointInventory', Requests: 1 });
    expect(request).not.toHaveProperty('KeySetFailures');
  });

  it('logs with the Lambda request id as correlation id and the API request id, then forgets both', async () => {
    const handler = handlerThat(async () => {
      logger.appendKeys({ tenant: 'acme', subject: 'user-1' });
      throw new errors.ForbiddenError('Not allowed.');
    });

    await handler(event, context('req-corr-1'));
    logger.info('between requests');

    const [refusal, between] = logLines();
    expect(refusal).toMatchObject({
      message: 'request refused',
      correlation_id: 'req-corr-1',
      api_request_id: 'api-gw-request-1',
      function_request_id: 'req-corr-1',
      tenant: 'acme',
      subject: 'user-1',
    });
    expect(between).not.toHaveProperty('correlation_id');
    expect(between).not.toHaveProperty('tenant');
  });
});

describe('Middleware: authorizerObservability', () => {
  const authorizerThat = (body: () => Promise<unknown>) =>
    middy()
      .use(authorizerObservability({ refusalMessage: 'Unauthorized' }))
      .handler(body);

  it('counts a failure to judge a token (AuthorizerFailures, which its alarm watches), never a refused token, one EMF line each', async () => {
    const allowing = authorizerThat(async () => ({ principalId: 'u', policyDocument: { Version: '2012-10-17', Statement: [] } }));
    const refusing = authorizerThat(async () => {
      throw new Error('Unauthorized');
    });
    const failing = authorizerThat(async () => {
      throw new errors.ServiceUnavailableError('The token keys are unavailable right now; try again later.');
    });

    await allowing(event, context('auth-1'));
    await expect(refusing(event, context('auth-2'))).rejects.toThrow('Unauthorized');
    await expect(failing(event, context('auth-3'))).rejects.toThrow('The token keys are unavailable');

    const blobs = emfLines();
    expect(blobs).toHaveLength(3);
    for (const blob of blobs) expect(blob).toMatchObject({ operation: 'authorizer', Requests: 1 });
    expect(blobs.map((b) => b.AuthorizerFailures)).toEqual([undefined, undefined, 1]);
    expect(blobs[2]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'operation']]);
  });
});
