import { gunzipSync } from 'node:zlib';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTenantAgents } from '../../local/fleet.js';
import { realisticAgents } from '../../local/generator.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine, useEnvironment } from '../helpers/env.js';
import { eventFixture, setHeader, testContext } from '../helpers/events.js';
import { answeringEndpoint, closedPortEndpoint, countingProxy, resettingEndpoint, silentEndpoint } from '../helpers/faults.js';
import { invokeStreamed, type StreamedAnswer } from '../helpers/streaming.js';

/** The handler as an instance started on the store at `endpoint` loads it (test/helpers/env.ts). */
let handler: typeof import('../../functions/inventory/handler.js').handler;

async function pointAt(endpoint: string): Promise<void> {
  useEnvironment({ DYNAMODB_ENDPOINT: endpoint, DYNAMODB_TIMEOUT_MS: '300', DYNAMODB_MAX_ATTEMPTS: '2' });
  ({ handler } = await import('../../functions/inventory/handler.js'));
}

/** `scope`: the authorizer's scope of a token with the scope claim; none: an unscoped token, whose listing also reads the tenant's policy. */
const list = (tenant = 'acme', acceptEncoding?: string, scope?: string): Promise<StreamedAnswer> =>
  invokeStreamed(
    handler,
    eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
      e.requestContext.authorizer!.tenant = tenant;
      if (scope !== undefined) e.requestContext.authorizer!.scope = scope;
      if (acceptEncoding) setHeader(e, 'Accept-Encoding', acceptEncoding);
    }),
    testContext('inventory'),
  );
/** A `*` token: it reads no policy, so every request the store sees is the Query's. */
const listAll = (): Promise<StreamedAnswer> => list('acme', undefined, '*');

describe('Handler: inventory when DynamoDB fails (real network faults)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('returns 503 with Retry-After, never 200 [], when DynamoDB refuses connections', async () => {
    await pointAt(await closedPortEndpoint());

    const response = await list();

    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toMatch(/^[0-9]+$/);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toMatch(/^The inventory store is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('returns 504 when DynamoDB accepts the connection but never answers', async () => {
    const silent = await silentEndpoint();
    cleanups.push(silent.close);
    await pointAt(silent.endpoint);

    const response = await list();

    expect(response.statusCode).toBe(504);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toMatch(/^The inventory store timed out; try again\. \(request id: [0-9a-f-]{36}\)\n$/);
    expect(response.body).not.toMatch(/127\.0\.0\.1|Error|at /);
  });

  it('returns 503 with Retry-After, not a 504 "timed out", when DynamoDB resets the connection (real socket reset)', async () => {
    const resetting = await resettingEndpoint();
    cleanups.push(resetting.close);
    await pointAt(resetting.endpoint);
    const started = performance.now();

    const response = await listAll();

    expect(resetting.resets()).toBe(2); // both bounded attempts were reset
    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toMatch(/^[0-9]+$/);
    expect(response.body).toMatch(/^The inventory store is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
    // A reset is known at once: the answer does not wait for the 300 ms timeout per attempt.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("returns 503 with Retry-After, not 502, when the store answers 503 with a load balancer's HTML page (stand-in: a server answering 503 text/html)", async () => {
    const balancer = await answeringEndpoint(() => ({
      statusCode: 503,
      contentType: 'text/html',
      body: '<html><head><title>503 Service Temporarily Unavailable</title></head><body><h1>503 Service Temporarily Unavailable</h1></body></html>',
    }));
    cleanups.push(balancer.close);
    await pointAt(balancer.endpoint);

    const response = await listAll();

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
    await pointAt(injector.endpoint);

    const response = await list();

    expect(injector.requests()).toBeGreaterThan(0);
    expect(response.statusCode).toBe(502);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.headers['Retry-After']).toMatch(/^[0-9]+$/);
    expect(response.body).toMatch(
      /^The inventory store gave an answer that cannot be read; try again later\. \(request id: [0-9a-f-]{36}\)\n$/,
    );
  });

  describe('after the first byte (fault injector: a proxy in front of the real engine that resets the connection from a given Query on)', () => {
    // One engine and one 6,000-agent tenant (three pages) for the group: seeding is the costly part.
    let engine: TestEngine;
    beforeAll(async () => {
      engine = await startTestEngine();
      cleanups.push(() => engine.close());
      await writeTenantAgents(engine.db, engine.tables, 'big', realisticAgents('big', 6_000, { now: new Date() }), 8);
    }, 60_000);

    async function failingFrom(query: number): Promise<void> {
      const proxy = await countingProxy(engine.endpoint, { failFrom: query });
      cleanups.push(proxy.close);
      useEngine({ ...engine, endpoint: proxy.endpoint }, { DYNAMODB_TIMEOUT_MS: '2000', DYNAMODB_MAX_ATTEMPTS: '2' });
      ({ handler } = await import('../../functions/inventory/handler.js'));
    }

    it.each([
      ['plain JSON', undefined],
      ['gzip', 'gzip'],
    ])(
      'breaks the transfer of a %s list that already began, so a client parsing what arrived gets an error, never a shorter list',
      async (_what, acceptEncoding) => {
        await failingFrom(3);

        const answer = await list('big', acceptEncoding);

        // The status line was committed after the first page: it cannot change now.
        expect(answer.statusCode).toBe(200);
        expect(answer.error).toMatchObject({ statusCode: 503, message: 'The inventory store is unavailable right now; try again later.' });
        expect(answer.raw.length).toBeGreaterThan(10_000);
        const parse = (): unknown => JSON.parse((acceptEncoding ? gunzipSync(answer.raw) : answer.raw).toString('utf8'));
        expect(parse).toThrow(acceptEncoding ? /unexpected end of file/ : /JSON/);
      },
    );

    it('answers a store failing on the first page with its text/plain 503 before any byte of a list', async () => {
      await failingFrom(1);

      const answer = await list('big', 'gzip');

      expect(answer.statusCode).toBe(503);
      expect(answer.headers['Content-Type']).toBe('text/plain; charset=utf-8');
      expect(answer.headers['Content-Encoding']).toBeUndefined();
      expect(answer.body).toMatch(/^The inventory store is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
    });
  });
});
