import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/inventory/handler.js';
import { resetConfig } from '../../lib/config.js';
import { setDynamo } from '../../lib/store/client.js';
import { eventFixture, testContext } from '../helpers/events.js';
import { answeringEndpoint, closedPortEndpoint, resettingEndpoint, silentEndpoint } from '../helpers/faults.js';

type Result = { statusCode: number; headers: Record<string, string>; body: string; isBase64Encoded?: boolean };

function pointAt(endpoint: string): void {
  Object.assign(process.env, { DYNAMODB_ENDPOINT: endpoint, DYNAMODB_TIMEOUT_MS: '300', DYNAMODB_MAX_ATTEMPTS: '2' });
  resetConfig();
  setDynamo(undefined);
}

const list = async (): Promise<Result> =>
  (await handler(eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents'), testContext('inventory'))) as Result;

describe('Handler: inventory when DynamoDB fails (real network faults)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('returns 503 with Retry-After, never 200 [], when DynamoDB refuses connections', async () => {
    pointAt(await closedPortEndpoint());

    const response = await list();

    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toMatch(/^[0-9]+$/);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toMatch(/^The inventory store is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('returns 504 when DynamoDB accepts the connection but never answers', async () => {
    const silent = await silentEndpoint();
    cleanups.push(silent.close);
    pointAt(silent.endpoint);

    const response = await list();

    expect(response.statusCode).toBe(504);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toMatch(/^The inventory store timed out; try again\. \(request id: [0-9a-f-]{36}\)\n$/);
    expect(response.body).not.toMatch(/127\.0\.0\.1|Error|at /);
  });

  it('returns 503 with Retry-After, not a 504 "timed out", when DynamoDB resets the connection (real socket reset)', async () => {
    const resetting = await resettingEndpoint();
    cleanups.push(resetting.close);
    pointAt(resetting.endpoint);
    const started = performance.now();

    const response = await list();

    expect(resetting.resets()).toBe(2); // both bounded attempts were reset
    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toMatch(/^[0-9]+$/);
    expect(response.body).toMatch(/^The inventory store is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
    // A reset is known at once: the answer does not wait for the 300 ms timeout per attempt.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('returns 503 with Retry-After, not 502, when the store answers 503 with a load balancer\'s HTML page (stand-in: a server answering 503 text/html)', async () => {
    const balancer = await answeringEndpoint(() => ({
      statusCode: 503,
      contentType: 'text/html',
      body: '<html><head><title>503 Service Temporarily Unavailable</title></head><body><h1>503 Service Temporarily Unavailable</h1></body></html>',
    }));
    cleanups.push(balancer.close);
    pointAt(balancer.endpoint);

    const response = await list();

    expect(balancer.requests()).toBe(2); // both bounded attempts: the SDK retries a 503
    expect(response.statusCode).toBe(503);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.headers['Retry-After']).toMatch(/^[0-9]+$/);
    expect(response.body).toMatch(/^The inventory store is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it.each([
    ['a page without Items', '{}'],
    ['Items that is not a list', '{"Items":"none"}'],
    ['items that are not objects', '{"Items":[1,2],"Count":2}'],
    ['a LastEvaluatedKey that is not a key', '{"Items":[],"LastEvaluatedKey":5}'],
    ['a body that is not JSON', 'Service Unavailable'],
  ])('returns 502, never 200 [], when the store answers %s (fault injector: a server answering 200 with it)', async (_what, body) => {
    const injector = await answeringEndpoint(body);
    cleanups.push(injector.close);
    pointAt(injector.endpoint);

    const response = await list();

    expect(injector.requests()).toBeGreaterThan(0);
    expect(response.statusCode).toBe(502);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.headers['Retry-After']).toMatch(/^[0-9]+$/);
    expect(response.body).toMatch(/^The inventory store gave an answer that cannot be read; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
  });
});
