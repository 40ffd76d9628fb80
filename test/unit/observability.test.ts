import { Readable } from 'node:stream';
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

/** A body that fails after its first chunk: a stream cut after the status went out. */
async function* failingBody(): AsyncGenerator<string> {
  yield '[1,';
  throw new Error('the store failed');
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

  it("gives each handler's lines its own operation when two are made in one process, and warns of nothing", async () => {
    const inventory = handlerThat(async () => ({ statusCode: 200, body: '[]' }), 'listEndpointInventory');
    const observations = handlerThat(async () => ({ statusCode: 200, body: '{}' }), 'getEndpointObservations');
    const again = handlerThat(async () => ({ statusCode: 200, body: '[]' }), 'listEndpointInventory');

    await inventory(event, context('req-two-1'));
    await observations(event, context('req-two-2'));
    await again(event, context('req-two-3'));

    expect(emfLines().map((blob) => blob.operation)).toEqual(['listEndpointInventory', 'getEndpointObservations', 'listEndpointInventory']);
    expect(emfLines().map((blob) => blob._aws.CloudWatchMetrics[0]!.Dimensions)).toEqual(Array(3).fill([['service', 'operation']]));
    expect(stderr.join('')).toBe('');
  });

  it('counts a refused request as a 4xx failure, after the failure middlewares mapped it', async () => {
    const handler = handlerThat(async () => {
      throw errors.httpError(404, 'No such endpoint.');
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
      metricsModule.recordItemsReturned(7);
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
      metricsModule.recordUnreadableRecords(3);
      return { statusCode: 200, body: '[]' };
    });
    const clean = handlerThat(async () => {
      metricsModule.recordUnreadableRecords(0);
      metricsModule.recordUnreadableSamples(2);
      return { statusCode: 200, body: '[]' };
    });

    await handler(event, context('req-unreadable'));
    await clean(event, context('req-clean'));

    expect(emfLines()).toHaveLength(2);
    expect(emfLines()[0]).toMatchObject({ UnreadableRecords: 3, Requests: 1 });
    expect(emfLines()[1]).toMatchObject({ UnreadableRecords: 0, UnreadableSamples: 2 });
  });

  it.each([
    ['ends', () => Readable.from(['[1,', '2]']), 200],
    ['is cut after its 200', () => Readable.from(failingBody()), 500],
  ] as const)(
    'counts a streamed answer whose body %s when the body is over, in a second line of its own (the first went out before the body)',
    async (_what, body, status) => {
      const handler = handlerThat(async () => ({ statusCode: 200, body: body() }));

      const response = (await handler(event, context('req-stream'))) as { body: Readable };
      await new Promise<void>((resolve) => {
        response.body.on('error', () => resolve());
        response.body.on('end', () => resolve());
        response.body.resume();
      });
      await new Promise((resolve) => setImmediate(resolve));

      const [first, second] = emfLines();
      expect(emfLines()).toHaveLength(2);
      expect(first).toMatchObject({ operation: 'listEndpointInventory', Requests: 1 });
      expect(first).not.toHaveProperty('Latency');
      expect(typeof first!.TimeToFirstByte).toBe('number');
      expect(second).toMatchObject({ operation: 'listEndpointInventory', statusCode: String(status) });
      expect(typeof second!.Latency).toBe('number');
      if (status === 500) expect(second).toMatchObject({ Failures5xx: 1 });
      else expect(second).not.toHaveProperty('Failures5xx');
    },
  );

  it("times a streamed answer's first byte when the handler answers (its status and headers leave), apart from its last byte", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    async function* slowBody(): AsyncGenerator<string> {
      await sleep(80);
      yield '[]';
    }
    // The first page takes 40 ms to read; the rest of the body 80 ms more.
    const handler = handlerThat(async () => {
      await sleep(40);
      return { statusCode: 200, body: Readable.from(slowBody()) };
    });
    const buffered = handlerThat(async () => ({ statusCode: 200, body: '[]' }));

    const response = (await handler(event, context('req-first-byte'))) as { body: Readable };
    await new Promise<void>((resolve) => {
      response.body.on('end', () => resolve());
      response.body.resume();
    });
    await new Promise((resolve) => setImmediate(resolve));
    await buffered(event, context('req-buffered'));

    const [first, last, other] = emfLines();
    expect(first!.TimeToFirstByte as number).toBeGreaterThanOrEqual(35);
    expect(last!.Latency as number).toBeGreaterThanOrEqual((first!.TimeToFirstByte as number) + 75);
    expect(last).not.toHaveProperty('TimeToFirstByte');
    expect(first!._aws.CloudWatchMetrics[0]!.Metrics).toContainEqual({ Name: 'TimeToFirstByte', Unit: 'Milliseconds' });
    // A buffered answer's first byte is its last: it has Latency alone.
    expect(other).toHaveProperty('Latency');
    expect(other).not.toHaveProperty('TimeToFirstByte');
  });

  it('logs with the Lambda request id as correlation id and the API request id, then forgets both', async () => {
    const handler = handlerThat(async () => {
      logger.appendKeys({ tenant: 'acme', subject: 'user-1' });
      throw errors.httpError(403, 'Not allowed.');
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

  it('counts a failure to judge a token (AuthorizerFailures) apart from a refused token (TokensRefused, which Lambda counts as an error too), one EMF line each', async () => {
    const allowing = authorizerThat(async () => ({ principalId: 'u', policyDocument: { Version: '2012-10-17', Statement: [] } }));
    const refusing = authorizerThat(async () => {
      throw new Error('Unauthorized');
    });
    const failing = authorizerThat(async () => {
      throw errors.retryLater(503, 'The token keys are unavailable right now; try again later.');
    });

    await allowing(event, context('auth-1'));
    await expect(refusing(event, context('auth-2'))).rejects.toThrow('Unauthorized');
    await expect(failing(event, context('auth-3'))).rejects.toThrow('The token keys are unavailable');

    const blobs = emfLines();
    expect(blobs).toHaveLength(3);
    for (const blob of blobs) expect(blob).toMatchObject({ operation: 'authorizer', Requests: 1 });
    expect(blobs.map((b) => b.AuthorizerFailures)).toEqual([undefined, undefined, 1]);
    expect(blobs.map((b) => b.TokensRefused)).toEqual([undefined, 1, undefined]);
    expect(blobs[2]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'operation']]);
  });
});
