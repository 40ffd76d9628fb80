import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GATEWAY_RESPONSES, gatewayResponse } from '../../infra/gateway-responses.js';
import { localRestApi } from '../../infra/local/gateway.js';
import { listenerRouter } from '../../infra/local/router.js';
import type { LambdaHandler, Route } from '../../infra/local/routes.js';
import { config } from '../../lib/config.js';

/**
 * The local REST API emulation over real HTTP, with stand-in functions behind its routes (a
 * function that crashes, an authorizer that answers nonsense: faults the deployed modules do not
 * produce on demand). What is checked is what API Gateway itself would answer: the gateway
 * responses of infra/gateway-responses.ts, the authorizer invoked and its answer cached as the
 * door says, its policy applied to the method asked.
 */

// The stand-in functions answer buffered, so every route here is BUFFERED (the streamed inventory
// through this gateway: test/e2e/inventory-streaming.test.ts).
const ROUTES: Route[] = [
  { api: 'public', method: 'GET', resource: '/api/agents', function: 'inventory', authorizer: 'inventory', transferMode: 'BUFFERED' },
  { api: 'public', method: 'POST', resource: '/api/mcp', function: 'mcp', authorizer: 'mcp', transferMode: 'BUFFERED' },
  { api: 'public', method: 'GET', resource: '/open', function: 'observations', authorizer: null, transferMode: 'BUFFERED' },
];

const allowAll: LambdaHandler = async (event) => {
  const arn = (event as { methodArn: string }).methodArn;
  return {
    principalId: 'user-1',
    policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: [arn] }] },
    context: { tenant: 'acme', sub: 'user-1', exp: 4_102_444_800, fresh: true },
  };
};
const echo: LambdaHandler = async (event) => ({
  statusCode: 200,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify((event as APIGatewayProxyEvent).requestContext.authorizer),
});

let functions: Record<string, LambdaHandler>;
let authorizerCalls = 0;
let clock = 1_000_000;
let server: Server;
let base: string;

beforeAll(async () => {
  const api = localRestApi({
    api: 'public',
    routes: ROUTES,
    handlerOf: async (name) => {
      const fn = functions[name]!;
      if (name !== 'authorizer') return fn;
      return async (event, context) => {
        authorizerCalls += 1;
        return fn(event, context);
      };
    },
    now: () => clock,
  });
  const router = listenerRouter(api);
  server = createServer((req, res) => void router.handle(req, res, randomUUID()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  functions = { authorizer: allowAll, inventory: echo, mcp: echo, observations: echo };
  authorizerCalls = 0;
  clock += 1_000_000;
});

const call = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(`${base}${path}`, init);
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
  it('answers a function that crashes with INTEGRATION_FAILURE (a crashing stand-in)', async () => {
    functions.observations = async () => {
      throw new Error('boom');
    };

    expectGatewayResponse(await call('/open'), 'INTEGRATION_FAILURE');
  });

  it('answers a function whose answer is no proxy result with INTEGRATION_FAILURE (a stand-in)', async () => {
    functions.observations = async () => ({ status: 200, body: 'no statusCode' });

    expectGatewayResponse(await call('/open'), 'INTEGRATION_FAILURE');
  });

  it('answers an authorizer that returns no policy with AUTHORIZER_CONFIGURATION_ERROR, a 503 (a stand-in)', async () => {
    functions.authorizer = async () => ({ principalId: 'x' });

    expectGatewayResponse(await call('/api/agents', withToken('t')), 'AUTHORIZER_CONFIGURATION_ERROR');
  });

  it('answers an authorizer that fails with AUTHORIZER_FAILURE, a 503, and one that says Unauthorized with the MCP door’s 401', async () => {
    functions.authorizer = async () => {
      throw new Error('the key set is down');
    };
    expectGatewayResponse(await call('/api/agents', withToken('t')), 'AUTHORIZER_FAILURE');

    functions.authorizer = async () => {
      throw new Error('Unauthorized');
    };
    const refused = await call('/api/mcp', withToken('t', { method: 'POST' }));
    expectGatewayResponse(refused, 'UNAUTHORIZED');
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${config().publicUrl}/.well-known/oauth-protected-resource/api/mcp"`,
    );
  });

  it('answers an Allow that does not name the method asked with ACCESS_DENIED: the inventory door’s 401, with the authorizer’s sentence', async () => {
    functions.authorizer = async () => ({
      principalId: 'x',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:*:*:*/*/POST/api/mcp' }],
      },
      context: { refusal: 'Not for this door.' },
    });

    const res = await call('/api/agents', withToken('t'));

    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${config().publicUrl}/.well-known/oauth-protected-resource/api/agents"`,
    );
    expect(res.body).toMatch(/^Not for this door\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('refuses a request without the identity source at the MCP door itself, never invoking the authorizer', async () => {
    expectGatewayResponse(await call('/api/mcp', { method: 'POST' }), 'UNAUTHORIZED');
    expect(authorizerCalls).toBe(0);
  });

  it('refuses a payload over API Gateway’s 10 MB with REQUEST_TOO_LARGE', async () => {
    expectGatewayResponse(
      await call('/api/mcp', withToken('t', { method: 'POST', body: Buffer.alloc(10 * 1024 * 1024 + 1, 'a') })),
      'REQUEST_TOO_LARGE',
    );
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
    functions.authorizer = async (event, context) => {
      const allowed = (await allowAll(event, context)) as { context: Record<string, unknown> };
      return { ...allowed, context: { ...allowed.context, judged: (event as { headers: Record<string, string> }).headers.Authorization } };
    };
    const post = async (token: string): Promise<{ status: number; judged: unknown }> => {
      const res = await call('/api/mcp', withToken(token, { method: 'POST', body: '{}' }));
      return { status: res.status, judged: (JSON.parse(res.body) as { judged?: unknown }).judged };
    };

    expect(await post('token-a')).toEqual({ status: 200, judged: 'Bearer token-a' });
    expect(await post('token-a')).toEqual({ status: 200, judged: 'Bearer token-a' });
    expect(await post('token-b')).toEqual({ status: 200, judged: 'Bearer token-b' });
    expect(authorizerCalls).toBe(2);

    clock += 300_001; // past the TTL
    expect(await post('token-a')).toEqual({ status: 200, judged: 'Bearer token-a' });
    expect(authorizerCalls).toBe(3);
  });

  it('asks the inventory door’s authorizer at every request, a missing token included', async () => {
    functions.authorizer = async (event) => ({
      principalId: 'anonymous',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: [(event as { methodArn: string }).methodArn] }],
      },
      context: { refusal: 'A bearer token is required.' },
    });

    const res = await call('/api/agents');
    await call('/api/agents', withToken('t'));
    await call('/api/agents', withToken('t'));

    expect(authorizerCalls).toBe(3);
    expect(res.status).toBe(401);
    expect(res.body).toMatch(/^A bearer token is required\. \(request id: /);
  });

  it('hands the authorizer’s context to the function with every value a string, and principalId', async () => {
    const res = await call('/api/agents', withToken('t'));

    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ principalId: 'user-1', tenant: 'acme', sub: 'user-1', exp: '4102444800', fresh: 'true' });
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
        'REQUEST_TOO_LARGE',
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
    ['REQUEST_TOO_LARGE', 413],
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
