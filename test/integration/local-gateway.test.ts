import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GATEWAY_RESPONSES, gatewayResponse } from '../../infra/gateway-responses.js';
import { PAYLOAD_LIMITS } from '../../local/payload-limits.js';
import { ROUTES as DEPLOYED_ROUTES, type Route, type RouteAuthorizer, TENANT_THROTTLE } from '../../local/template-routes.js';
import { traceRootOf } from '../../local/trace-header.js';
import {
  FIXTURE_GATEWAY_CONFIG,
  type FixtureFunctions,
  type FixtureGateway,
  fixtureFunctions,
  fixtureGateway,
} from '../helpers/sandbox.js';

/**
 * The local REST API emulation over real HTTP, with fixture functions behind its routes
 * (test/fixtures/functions/: a function that crashes, an authorizer that answers nonsense, each
 * chosen by the request: faults the deployed functions do not produce on demand), run in the local
 * sandboxes as the deployed ones are. What is checked is what API Gateway itself would answer: the
 * gateway responses of infra/gateway-responses.ts, the authorizer invoked and its answer cached as
 * the door says, its policy applied to the method asked.
 */

// The fixture behind these routes answers buffered (the streamed inventory through the gateway:
// test/integration/sandbox.test.ts and test/e2e/inventory-streaming.test.ts).
/** The authorizer serverless.yml puts in front of a door (its identity source and cache). */
const doorAt = (resource: string): RouteAuthorizer => DEPLOYED_ROUTES.find((r) => r.resource === resource && r.authorizer)!.authorizer!;
const door = (method: string, resource: string): Route => ({
  api: 'public',
  method,
  resource,
  function: 'mcp',
  authorizer: doorAt(resource),
  apiKeyRequired: DEPLOYED_ROUTES.find((r) => r.method === method && r.resource === resource)!.apiKeyRequired,
  transferMode: 'BUFFERED',
});
const ROUTES: Route[] = [
  door('GET', '/api/agents'),
  door('POST', '/api/mcp'),
  { api: 'public', method: 'GET', resource: '/open', function: 'observations', authorizer: null, transferMode: 'BUFFERED' },
];

const cfg = FIXTURE_GATEWAY_CONFIG;
let functions: FixtureFunctions;
let gateway: FixtureGateway;
let clock = 1_000_000;
let invokedBefore = 0;
/** How often the authorizer was invoked since the test began. */
const authorizerCalls = (): number => functions.stats('authorizer').invocations - invokedBefore;

beforeAll(async () => {
  functions = await fixtureFunctions();
  gateway = await fixtureGateway(functions, { api: 'public', routes: ROUTES, now: () => clock });
});
afterAll(async () => {
  await gateway?.close();
  await functions?.stop();
});
beforeEach(() => {
  invokedBefore = functions.stats('authorizer').invocations;
  clock += 1_000_000;
});

const call = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(`${gateway.base}${path}`, init);
  return { status: response.status, headers: response.headers, body: await response.text() };
};
const withToken = (token: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { Authorization: `Bearer ${token}`, ...init.headers },
});

/** A gateway response as the contract wants every failure: its status, text/plain, one sentence and the request id, no-store. */
function expectGatewayResponse(res: { status: number; headers: Headers; body: string }, type: Parameters<typeof gatewayResponse>[0]): void {
  const definition = gatewayResponse(type);
  expect(res.status).toBe(definition.status);
  expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('retry-after')).toBe(definition.retryAfterSeconds === undefined ? null : String(definition.retryAfterSeconds));
  expect(res.body).toMatch(
    new RegExp(`^${definition.sentence.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(request id: [0-9a-f-]{36}\\)\\n$`),
  );
}

describe('Local gateway: API Gateway’s own answers', () => {
  it('answers a function that throws with INTEGRATION_FAILURE (a fixture function)', async () => {
    expectGatewayResponse(await call('/open?do=throw'), 'INTEGRATION_FAILURE');
  });

  it('answers a function whose answer is no proxy result with INTEGRATION_FAILURE (a fixture function)', async () => {
    expectGatewayResponse(await call('/open?do=no-proxy-result'), 'INTEGRATION_FAILURE');
  });

  it('answers an authorizer that returns no policy with AUTHORIZER_CONFIGURATION_ERROR, a 503 (a fixture authorizer)', async () => {
    expectGatewayResponse(await call('/api/agents', withToken('no-policy')), 'AUTHORIZER_CONFIGURATION_ERROR');
  });

  it('answers an authorizer that fails with AUTHORIZER_FAILURE, a 503, and one that says Unauthorized with the MCP door’s 401', async () => {
    expectGatewayResponse(await call('/api/agents', withToken('crash')), 'AUTHORIZER_FAILURE');

    const refused = await call('/api/mcp', withToken('unauthorized', { method: 'POST' }));
    expectGatewayResponse(refused, 'UNAUTHORIZED');
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${cfg.publicUrl}/.well-known/oauth-protected-resource/api/mcp", scope="endpoints:read"`,
    );
  });

  it('answers an Allow that does not name the method asked with ACCESS_DENIED: the inventory door’s 401, with the authorizer’s sentence', async () => {
    const res = await call('/api/agents', withToken('wrong-method'));

    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${cfg.publicUrl}/.well-known/oauth-protected-resource/api/agents", scope="endpoints:read"`,
    );
    expect(res.body).toMatch(/^Not for this door\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('refuses a request without the identity source at the MCP door itself, never invoking the authorizer', async () => {
    expectGatewayResponse(await call('/api/mcp', { method: 'POST' }), 'UNAUTHORIZED');
    expect(authorizerCalls()).toBe(0);
  });

  it('refuses a body over API Gateway’s 10 MB as AWS does (413 text, not a gateway response it lets us word), before the authorizer', async () => {
    const res = await call('/api/mcp', withToken('t', { method: 'POST', body: Buffer.alloc(PAYLOAD_LIMITS.apiGatewayBytes + 1, 'a') }));

    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('text; charset=utf-8');
    expect(res.body).toBe('HTTP content length exceeded 10485760 bytes.');
    expect(authorizerCalls()).toBe(0);
  });

  it('refuses an event past Lambda’s 6 MB invocation payload as AWS does (413 "Request Too Long"), never invoking the function', async () => {
    const invoked = functions.stats('mcp').invocations;
    const under = await call(
      '/api/mcp',
      withToken('t', { method: 'POST', body: Buffer.alloc(PAYLOAD_LIMITS.lambdaInvocationBytes - 8192, 'a') }),
    );
    const over = await call('/api/mcp', withToken('t', { method: 'POST', body: Buffer.alloc(PAYLOAD_LIMITS.lambdaInvocationBytes, 'a') }));

    expect(under.status).toBe(200);
    expect(over.status).toBe(413);
    expect(over.headers.get('content-type')).toBe('application/json');
    expect(over.headers.get('x-amzn-errortype')).toBe('BadRequestException');
    expect(over.body).toBe('{"message": "Request Too Long"}');
    expect(functions.stats('mcp').invocations).toBe(invoked + 1);
  });

  it.each([
    ['an unknown path', '/nowhere', 'GET'],
    ['a method the path does not have', '/api/agents', 'DELETE'],
    ['the path with a trailing slash', '/api/agents/', 'GET'],
  ])('answers %s with 404, the REST API’s missing route', async (_what, path, method) => {
    expectGatewayResponse(await call(path, { method }), 'MISSING_AUTHENTICATION_TOKEN');
  });
});

describe('Local gateway: the token authorizer in front of a door', () => {
  it('caches the MCP door’s answer per token for the door’s TTL, then asks again', async () => {
    // The authorizer names in its context the token it judged: a cached answer shows whose it is.
    const post = async (token: string): Promise<{ status: number; judged: unknown }> => {
      const res = await call('/api/mcp', withToken(token, { method: 'POST', body: '{}' }));
      return { status: res.status, judged: (JSON.parse(res.body) as { judged?: unknown }).judged };
    };

    expect(await post('token-a')).toEqual({ status: 200, judged: 'Bearer token-a' });
    expect(await post('token-a')).toEqual({ status: 200, judged: 'Bearer token-a' });
    expect(await post('token-b')).toEqual({ status: 200, judged: 'Bearer token-b' });
    expect(authorizerCalls()).toBe(2);

    clock += 300_001; // past the TTL
    expect(await post('token-a')).toEqual({ status: 200, judged: 'Bearer token-a' });
    expect(authorizerCalls()).toBe(3);
  });

  it('asks the inventory door’s authorizer at every request, a missing token included', async () => {
    const res = await call('/api/agents');
    await call('/api/agents', withToken('deny'));
    await call('/api/agents', withToken('deny'));

    expect(authorizerCalls()).toBe(3);
    expect(res.status).toBe(401);
    expect(res.body).toMatch(/^A bearer token is required\. \(request id: /);
  });

  it('hands the authorizer’s context to the function with every value a string, and principalId', async () => {
    const res = await call('/api/agents', withToken('t'));

    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ principalId: 'user-1', tenant: 'acme', sub: 'user-1', exp: '4102444800', fresh: 'true' });
    expect(JSON.parse(res.body).judged).toBe('Bearer t');
  });
});

describe('Local gateway: per-tenant throttling (the tenants’ usage plan, API keys from the authorizer)', () => {
  it('throttles a tenant past its burst with THROTTLED (429) while another tenant is served, with the template’s rate and burst', async () => {
    // The clock stands still: no token comes back during the test.
    const served: number[] = [];
    for (let i = 0; i < TENANT_THROTTLE.burstLimit; i += 1) served.push((await call('/api/agents', withToken('tenant-busy'))).status);

    const over = await call('/api/agents', withToken('tenant-busy'));
    const overAtMcp = await call('/api/mcp', withToken('tenant-busy', { method: 'POST', body: '{}' }));
    const other = await call('/api/agents', withToken('tenant-quiet'));

    expect(TENANT_THROTTLE).toEqual({ rateLimit: 10, burstLimit: 20 });
    expect(served).toEqual(Array(TENANT_THROTTLE.burstLimit).fill(200));
    expectGatewayResponse(over, 'THROTTLED');
    // One bucket per tenant, across both doors.
    expectGatewayResponse(overAtMcp, 'THROTTLED');
    expect(other.status).toBe(200);
    expect(JSON.parse(other.body)).toMatchObject({ tenant: 'quiet' });
  });

  it('serves the throttled tenant again once its bucket refills at the plan’s rate', async () => {
    for (let i = 0; i <= TENANT_THROTTLE.burstLimit; i += 1) await call('/api/agents', withToken('tenant-refill'));
    expect((await call('/api/agents', withToken('tenant-refill'))).status).toBe(429);

    clock += 1000 / TENANT_THROTTLE.rateLimit;

    expect((await call('/api/agents', withToken('tenant-refill'))).status).toBe(200);
    expect((await call('/api/agents', withToken('tenant-refill'))).status).toBe(429);
  });

  it('refuses an allowed request that names no API key with INVALID_API_KEY (403), never invoking the function', async () => {
    const before = functions.stats('mcp').invocations;

    expectGatewayResponse(await call('/api/agents', withToken('no-usage-key')), 'INVALID_API_KEY');
    expect(functions.stats('mcp').invocations).toBe(before);
  });
});

describe('Local gateway: the X-Ray trace header, as API Gateway with tracing on passes it', () => {
  it('continues the trace a request names: the same root in the event and in the invocation, a parent of its own', async () => {
    const sent = 'Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1';

    const res = JSON.parse((await call('/open?do=trace', { headers: { 'X-Amzn-Trace-Id': sent } })).body) as {
      header: string;
      env: string;
    };

    expect(traceRootOf(res.header)).toBe('1-67891233-abcdef012345678912345678');
    expect(res.header).toMatch(/;Sampled=1$/);
    expect(res.header).not.toContain('Parent=53995c3f42cd8ad8');
    expect(res.env).toBe(res.header);
  });

  it('starts a trace for a request that names none, or names one that is no trace', async () => {
    const none = JSON.parse((await call('/open?do=trace')).body) as { header: string; env: string };
    const junk = JSON.parse((await call('/open?do=trace', { headers: { 'X-Amzn-Trace-Id': 'Root=$(rm -rf);x' } })).body) as {
      header: string;
    };

    expect(none.header).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=1$/);
    expect(none.env).toBe(none.header);
    expect(junk.header).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24};/);
    expect(junk.header).not.toContain('rm -rf');
  });
});

describe('Gateway responses table', () => {
  it('has every type API Gateway answers itself that the contract must word, each once', () => {
    const types = GATEWAY_RESPONSES.map((r) => r.type);

    expect(new Set(types).size).toBe(types.length);
    expect(types).toEqual(
      expect.arrayContaining([
        'UNAUTHORIZED',
        'ACCESS_DENIED',
        'AUTHORIZER_FAILURE',
        'AUTHORIZER_CONFIGURATION_ERROR',
        'THROTTLED',
        'QUOTA_EXCEEDED',
        'INTEGRATION_TIMEOUT',
        'INTEGRATION_FAILURE',
        'MISSING_AUTHENTICATION_TOKEN',
        'RESOURCE_NOT_FOUND',
        'DEFAULT_4XX',
        'DEFAULT_5XX',
      ]),
    );
  });

  it.each([
    ['UNAUTHORIZED', 401],
    ['ACCESS_DENIED', 401],
    ['AUTHORIZER_FAILURE', 503],
    ['AUTHORIZER_CONFIGURATION_ERROR', 503],
    ['THROTTLED', 429],
    ['QUOTA_EXCEEDED', 429],
    ['INTEGRATION_TIMEOUT', 504],
    ['MISSING_AUTHENTICATION_TOKEN', 404],
    ['RESOURCE_NOT_FOUND', 404],
  ] as const)('%s is a %i with the statuses of docs/design.md §6', (type, status) => {
    expect(gatewayResponse(type).status).toBe(status);
  });

  it('gives a Retry-After to every 503 and 429, and the challenge of a door to every 401', () => {
    for (const definition of GATEWAY_RESPONSES) {
      if (definition.status === 503 || definition.status === 429) expect(definition.retryAfterSeconds, definition.type).toBeGreaterThan(0);
      if (definition.status === 401) expect(definition.challenge, definition.type).toBeDefined();
    }
    expect(new Set(GATEWAY_RESPONSES.filter((r) => r.status === 401).map((r) => r.challenge))).toEqual(new Set(['inventory', 'mcp']));
  });
});
