import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticAnswerOf } from '../../infra/static-answers.js';
import { answerMockIntegration } from '../../local/mock-integration.js';
import { useEnvironment } from '../helpers/env.js';
import { eventFixture, setHeader, testContext } from '../helpers/events.js';
import { FUNCTION_ENVIRONMENT } from '../helpers/function-environment.js';
import { recentDemoFleet } from '../helpers/mcp-client.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { get } from '../helpers/stack.js';

/**
 * The MCP door over plain HTTP, as curl or a browser meets it: JSON answers without a session, its
 * refusals (methods, tokens, tenant, protocol rules), its RFC 9728 documents, and CORS for
 * browser-based clients. Locally the listener's guard (local/guard.ts) refuses a page of an
 * origin it does not serve before the function runs; the function's own refusal, what API Gateway
 * passes on from it on AWS, is shown by calling its handler in-process.
 */

/** The MCP function's answer, called in-process (no gateway in front), to a browser's request at /api/mcp from `origin`. */
async function functionAnswerTo(
  method: 'POST',
  origin: string,
): Promise<{ statusCode: number; headers: Record<string, string>; body: string }> {
  // As a function with serverless.yml's environment (its own origin is PUBLIC_URL's, never evil.example).
  useEnvironment({});
  const { handler } = await import('../../functions/mcp/handler.js');
  const event = eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
    e.resource = '/api/mcp';
    e.path = '/api/mcp';
    e.httpMethod = method;
    e.requestContext.resourcePath = '/api/mcp';
    e.requestContext.httpMethod = method;
    e.body = method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) : null;
    setHeader(e, 'Origin', origin);
  });
  return (await handler(event as never, testContext('mcp'))) as { statusCode: number; headers: Record<string, string>; body: string };
}

let stack: SharedStack;

beforeAll(async () => {
  stack = await sharedStack(recentDemoFleet(new Date()));
});
afterAll(async () => {
  await stack?.release();
});

describe('E2E: the MCP door over plain HTTP', () => {
  const post = (body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${stack.publicUrl}/api/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
  };

  it('answers initialize with JSON and never hands out a session id', async () => {
    const res = await post(initialize, { Authorization: `Bearer ${await stack.mcpToken()}` });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { serverInfo: { name: 'endpoint-read-service' }, capabilities: { tools: { listChanged: false } } },
    });
  });

  it.each(['GET', 'DELETE'])('answers %s /api/mcp with 405 and Allow: POST (no stream, no session)', async (method) => {
    const res = await fetch(`${stack.publicUrl}/api/mcp`, {
      method,
      headers: { Authorization: `Bearer ${await stack.mcpToken()}`, Accept: 'text/event-stream' },
    });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toMatch(/^This MCP server is stateless: it answers POST only/);
  });

  it('refuses a request from a browser origin it was not told to serve (403), and admits a listed one', async () => {
    const token = await stack.mcpToken();
    const foreign = await post(initialize, { Authorization: `Bearer ${token}`, Origin: 'http://evil.example' });
    const previous = stack.updateEnvironment({ MCP_ALLOWED_ORIGINS: 'http://localhost:6274' });
    try {
      const listed = await post(initialize, { Authorization: `Bearer ${token}`, Origin: 'http://localhost:6274' });
      expect(listed.status).toBe(200);
    } finally {
      stack.updateEnvironment(previous);
    }
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect(await foreign.text()).toMatch(
      /^This local service answers web pages of its own origin \(http:\/\/localhost:\d+\) and MCP_ALLOWED_ORIGINS only/,
    );
    const own = await functionAnswerTo('POST', 'http://evil.example');
    expect(own.statusCode).toBe(403);
    expect(own.body).toMatch(/^Requests from this Origin are not allowed; set MCP_ALLOWED_ORIGINS to admit it\. \(request id: /);
  });

  describe('CORS for browser-based clients', () => {
    const ADMITTED = 'http://localhost:6274';
    const preflight = (origin: string, requestHeaders = 'authorization, content-type, mcp-protocol-version'): Promise<Response> =>
      fetch(`${stack.publicUrl}/api/mcp`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': requestHeaders },
      });

    let previous: Record<string, string | undefined>;
    beforeAll(() => {
      previous = stack.updateEnvironment({ MCP_ALLOWED_ORIGINS: `${ADMITTED}, https://app.example` });
    });
    afterAll(() => {
      stack.updateEnvironment(previous);
    });

    it('answers the preflight of an admitted origin, without a token, with the methods and the MCP request headers', async () => {
      const res = await preflight(ADMITTED);

      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(ADMITTED);
      expect(res.headers.get('access-control-allow-methods')).toBe('POST');
      expect(res.headers.get('access-control-allow-headers')).toBe(
        'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name',
      );
      expect(res.headers.get('access-control-max-age')).toBe('600');
      expect(res.headers.get('vary')).toBe('Origin');
    });

    it('gives another origin no Access-Control-Allow-Origin (403), so the browser refuses to send', async () => {
      const res = await preflight('http://evil.example');
      // API Gateway's own answer to that preflight on AWS (its MOCK integration, past the local listener's guard).
      const cfg = stack.config;
      const method = staticAnswerOf('OPTIONS', '/api/mcp', { ...cfg, mcpAllowedOrigins: [...cfg.mcpAllowedOrigins, ...cfg.ownOrigins] })!;
      const own = answerMockIntegration(
        method.Integration,
        { url: '/api/mcp', rawHeaders: ['Origin', 'http://evil.example', 'Access-Control-Request-Method', 'POST'] },
        'req-1',
      );

      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(await res.text()).toMatch(/^This local service answers web pages of its own origin/);
      expect(own.status).toBe(403);
      expect(own.headers['Access-Control-Allow-Origin']).toBeUndefined();
      expect(own.headers.Vary).toBe('Origin');
      expect(own.body).toBe('Requests from this Origin are not allowed; set MCP_ALLOWED_ORIGINS to admit it. (request id: req-1)\n');
    });

    it('makes the answers of an admitted origin readable, the challenge and protocol headers exposed, failures included', async () => {
      const ok = await post(initialize, { Authorization: `Bearer ${await stack.mcpToken()}`, Origin: ADMITTED });
      const refused = await fetch(`${stack.publicUrl}/api/mcp`, {
        method: 'GET',
        headers: { Authorization: `Bearer ${await stack.mcpToken()}`, Origin: ADMITTED },
      });

      for (const res of [ok, refused]) {
        expect(res.headers.get('access-control-allow-origin')).toBe(ADMITTED);
        expect(res.headers.get('access-control-expose-headers')).toBe('WWW-Authenticate, Mcp-Protocol-Version');
        expect(res.headers.get('vary')).toBe('Origin');
      }
      expect([ok.status, refused.status]).toEqual([200, 405]);
    });

    it('lets an admitted origin, and no other, read the protected resource metadata, protocol header included', async () => {
      const ask = (origin: string) =>
        fetch(`${stack.publicUrl}/.well-known/oauth-protected-resource/api/mcp`, {
          method: 'OPTIONS',
          headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'mcp-protocol-version' },
        });
      const [admitted, other] = await Promise.all([ask(ADMITTED), ask('http://anywhere.example')]);

      expect(admitted.status).toBe(204);
      expect(admitted.headers.get('access-control-allow-origin')).toBe(ADMITTED);
      expect(admitted.headers.get('access-control-allow-headers')).toContain('Mcp-Protocol-Version');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  it('answers a 401 of its own (no verified caller reached it) with the Bearer challenge that leads to the metadata', async () => {
    // The handler called in-process (no gateway can hand it an event without a caller), as a function with serverless.yml's environment.
    useEnvironment({});
    const { handler } = await import('../../functions/mcp/handler.js');
    const event = eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
      e.resource = '/api/mcp';
      e.path = '/api/mcp';
      e.httpMethod = 'POST';
      e.requestContext.resourcePath = '/api/mcp';
      e.requestContext.httpMethod = 'POST';
      delete (e.requestContext as { authorizer?: unknown }).authorizer;
      e.body = JSON.stringify(initialize);
    });

    const presented = (await handler(event as never, testContext('mcp'))) as { statusCode: number; headers: Record<string, string> };
    delete event.headers.Authorization;
    delete event.multiValueHeaders.Authorization;
    const missing = (await handler(event as never, testContext('mcp'))) as { statusCode: number; headers: Record<string, string> };

    const metadata = `${FUNCTION_ENVIRONMENT.PUBLIC_URL}/.well-known/oauth-protected-resource/api/mcp`;
    expect(presented.statusCode).toBe(401);
    expect(presented.headers['WWW-Authenticate']).toBe(
      `Bearer resource_metadata="${metadata}", scope="endpoints:read", error="invalid_token", error_description="A bearer token checked by the token authorizer is required."`,
    );
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['WWW-Authenticate']).toBe(`Bearer resource_metadata="${metadata}", scope="endpoints:read"`);
  });

  it.each(['/.well-known/oauth-protected-resource/api/mcp', '/.well-known/oauth-protected-resource'])(
    'serves the protected resource metadata at %s without a token, naming the issuer and the resource as tokens carry it',
    async (path) => {
      const res = await fetch(`${stack.publicUrl}${path}`);

      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(await res.json()).toEqual({
        resource: stack.config.mcpAudience,
        authorization_servers: [stack.config.jwtIssuer],
        scopes_supported: ['endpoints:read'],
        bearer_methods_supported: ['header'],
        resource_name: 'Endpoint read service (MCP)',
      });
      expect(stack.config.mcpAudience).toBe(`${stack.publicUrl}/api/mcp`);
    },
  );

  it('answers malformed JSON with a JSON-RPC parse error', async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1, "method": ', { Authorization: `Bearer ${await stack.mcpToken()}` });

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  describe('every malformed JSON-RPC form, answered in one sentence naming what was wrong', () => {
    const MODERN = { 'Mcp-Protocol-Version': '2025-06-18' };
    const initializeWith = (params: unknown) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      ...(params === undefined ? {} : { params }),
    });
    it.each<[string, string | unknown, Record<string, string>, number, number, RegExp | string]>([
      [
        'initialize without params',
        initializeWith(undefined),
        {},
        200,
        -32602,
        'initialize needs params such as {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "…", "version": "…"}}, and it has none.',
      ],
      [
        'initialize without clientInfo',
        initializeWith({ protocolVersion: '2025-06-18', capabilities: {} }),
        {},
        200,
        -32602,
        /clientInfo \(an object with the strings name and version\) is missing/,
      ],
      [
        'a batch holding initialize',
        [initializeWith(initialize.params), { jsonrpc: '2.0', id: 2, method: 'tools/list' }],
        {},
        400,
        -32600,
        'initialize cannot be batched: send it alone, in an HTTP request of its own, before anything else; nothing in the batch was run.',
      ],
      [
        'a malformed MCP-Protocol-Version header',
        { jsonrpc: '2.0', id: 3, method: 'tools/list' },
        { 'Mcp-Protocol-Version': 'latest please' },
        400,
        -32600,
        'The MCP-Protocol-Version header `latest please` names no protocol version this server speaks: it speaks 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 and 2024-10-07.',
      ],
      ['an empty body', '', {}, 400, -32700, 'The request body is empty: send one JSON-RPC message as JSON.'],
      ['a number', '42', {}, 400, -32600, /^A JSON-RPC message must be an object .*; got a number\.$/],
      [
        'no "jsonrpc": "2.0"',
        { jsonrpc: '1.0', id: 4, method: 'tools/list' },
        {},
        400,
        -32600,
        'A JSON-RPC message must say "jsonrpc": "2.0".',
      ],
      [
        'an id that is an object',
        { jsonrpc: '2.0', id: {}, method: 'tools/list' },
        {},
        400,
        -32600,
        'The id of a JSON-RPC message must be a string or a number; got an object.',
      ],
      ['no method', { jsonrpc: '2.0', id: 5 }, {}, 400, -32600, /^A JSON-RPC message needs a "method"/],
      [
        'params that are an array',
        { jsonrpc: '2.0', id: 6, method: 'tools/list', params: [] },
        MODERN,
        200,
        -32602,
        'The params of `tools/list` must be a JSON object; got an array.',
      ],
      ['an empty batch', [], {}, 400, -32600, 'A JSON-RPC batch must carry at least one message; this one is empty.'],
      [
        'a batch of numbers',
        [1, 2],
        {},
        400,
        -32600,
        /^Message 1 of the batch is refused: a JSON-RPC message must be an object .*; nothing in the batch was run\.$/,
      ],
      [
        'an unknown method',
        { jsonrpc: '2.0', id: 7, method: 'prompts/list' },
        MODERN,
        200,
        -32601,
        'This MCP server does not serve the method `prompts/list`.',
      ],
      [
        'an unknown tool',
        { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'rm -rf' } },
        MODERN,
        200,
        -32602,
        'There is no tool `rm -rf` here; the tools are observations and list_endpoints.',
      ],
      [
        'tools/call without params',
        { jsonrpc: '2.0', id: 9, method: 'tools/call' },
        MODERN,
        200,
        -32602,
        'tools/call needs params.name, the tool to call: observations and list_endpoints.',
      ],
      [
        'resources/read without a uri',
        { jsonrpc: '2.0', id: 10, method: 'resources/read', params: {} },
        MODERN,
        200,
        -32602,
        'resources/read needs params.uri, the URI of a resource that resources/list names.',
      ],
      [
        'an unknown resource',
        { jsonrpc: '2.0', id: 11, method: 'resources/read', params: { uri: 'ui://nowhere' } },
        MODERN,
        200,
        -32602,
        'There is no resource `ui://nowhere` here; resources/list names the ones there are.',
      ],
      [
        'a 2026-07-28 request without its _meta',
        { jsonrpc: '2.0', id: 12, method: 'tools/list' },
        { 'Mcp-Protocol-Version': '2026-07-28' },
        400,
        -32602,
        /^A 2026-07-28 request .* lacks `_meta`\.$/,
      ],
      [
        'an Accept without JSON',
        { jsonrpc: '2.0', id: 13, method: 'tools/list' },
        { ...MODERN, Accept: 'text/html' },
        406,
        -32000,
        'The Accept header must name both application/json and text/event-stream.',
      ],
      [
        'a Content-Type that is not JSON',
        { jsonrpc: '2.0', id: 14, method: 'tools/list' },
        { ...MODERN, 'Content-Type': 'text/plain' },
        415,
        -32000,
        'The Content-Type header must be application/json.',
      ],
    ])('%s', async (_form, body, headers, status, code, message) => {
      const res = await post(body, { Authorization: `Bearer ${await stack.mcpToken()}`, ...headers });
      const answer = (await res.json()) as { error: { code: number; message: string } };

      expect(res.status).toBe(status);
      expect(answer.error.code).toBe(code);
      if (typeof message === 'string') expect(answer.error.message).toBe(message);
      else expect(answer.error.message).toMatch(message);
      // One sentence: one line, no issue dump, no SDK prefix.
      expect(answer.error.message).toMatch(/^[^\n]+[.]$/);
      expect(answer.error.message).not.toMatch(/^(Bad Request|Invalid params|Invalid Request|Parse error):|"code": "invalid_type"/);
    });
  });

  describe('bodies bounded before they are parsed, the instance unharmed', () => {
    /** Arrays and objects nested in balance until the body has `bytes` bytes (arrays alone: no quote for the event to escape). */
    const nested = (bytes: number, kind: 'arrays' | 'arrays and objects' = 'arrays and objects'): string => {
      if (kind === 'arrays') return `${'['.repeat(bytes / 2)}${']'.repeat(bytes / 2)}`;
      const levels = Math.floor(bytes / 8);
      return `${'{"a":['.repeat(levels)}${']}'.repeat(levels)}`;
    };
    /** A legal tools/call whose reason is padded with spaces (trimmed away) until the message has about `bytes` bytes. */
    const validMessage = (bytes: number): string =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'observations', arguments: { agent_id: 'ac-001', reason: `${' '.repeat(bytes)}size check` } },
      });
    const toolsList = (token: string) =>
      post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { Authorization: `Bearer ${token}`, 'Mcp-Protocol-Version': '2025-06-18' });

    it.each<[string, string, number, RegExp]>([
      [
        '1 MB of nested arrays and objects',
        nested(1_000_000),
        413,
        /^The request body has 1,000,000 bytes, and this MCP server reads at most 131,072 \(128 KiB\): none of it was read\.$/,
      ],
      ['5.5 MB of nested arrays', nested(5_500_000, 'arrays'), 413, /^The request body has 5,500,000 bytes/],
      ['a valid message of 1.5 MB', validMessage(1_500_000), 413, /^The request body has 1,500,[0-9]{3} bytes/],
      ['a small body nested 5,000 deep', nested(40_000), 400, /^The request body nests arrays and objects more than 32 deep/],
    ])('refuses %s without parsing it, and the same instance then answers a normal call', async (_what, body, status, message) => {
      const token = await stack.mcpToken();
      expect((await toolsList(token)).status).toBe(200);
      const before = stack.functions.stats('mcp');

      const refused = await post(body, { Authorization: `Bearer ${token}` });
      const answer = (await refused.json()) as { id: unknown; error: { message: string } };
      const after = await toolsList(token);

      expect(refused.status).toBe(status);
      expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answer.id).toBeNull();
      expect(answer.error.message).toMatch(message);
      expect(after.status).toBe(200);
      expect(((await after.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(2);
      // No instance was lost or added: the refusal and the next call ran on the warm one.
      expect(stack.functions.stats('mcp').coldStarts).toBe(before.coldStarts);
    });

    // In the event the body is a JSON string: each quote costs two bytes, so 5.5 MB with quotes is past Lambda's 6 MB too.
    it.each([
      ['9.9 MB of nested arrays and objects', nested(9_900_000)],
      ['5.5 MB of nested arrays and objects', nested(5_500_000)],
    ])("refuses %s at Lambda's 6 MB invocation payload, as AWS does, before any instance holds it", async (_what, body) => {
      const token = await stack.mcpToken();
      expect((await toolsList(token)).status).toBe(200);
      const before = stack.functions.stats('mcp');

      const refused = await post(body, { Authorization: `Bearer ${token}` });
      const text = await refused.text();
      const after = await toolsList(token);

      expect(refused.status).toBe(413);
      expect(text).toBe('{"message": "Request Too Long"}');
      expect(after.status).toBe(200);
      expect(stack.functions.stats('mcp')).toMatchObject({ coldStarts: before.coldStarts, invocations: before.invocations + 1 });
    });
  });

  it('refuses a subscription stream it cannot serve with a JSON-RPC error', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 7, method: 'subscriptions/listen', params: {} },
      { Authorization: `Bearer ${await stack.mcpToken()}` },
    );

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it("refuses an expired MCP token with the gateway's 401, whose challenge names the MCP door's metadata", async () => {
    const res = await post(initialize, { Authorization: `Bearer ${await stack.mcpToken({ expiresInSeconds: -30 })}` });

    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${stack.publicUrl}/.well-known/oauth-protected-resource/api/mcp", scope="endpoints:read"`,
    );
    expect(await res.text()).toMatch(
      /^A valid bearer token issued for this MCP server is required; none was sent, or the one sent was refused\. Here, locally: The bearer token has expired\. \(request id: /,
    );
  });

  it('refuses a token without a tenant with 403', async () => {
    const res = await post(initialize, { Authorization: `Bearer ${await stack.mcpToken({ tenant: undefined })}` });

    expect(res.status).toBe(403);
  });

  it('accepts no token at a door it was not made for: inventory, MCP and observations audiences all differ', async () => {
    const inventoryToken = await stack.token();
    const mcpToken = await stack.mcpToken();
    const exchanged = await stack.brokerToken();
    const agents = (bearer: string) => get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${bearer}` });
    const observe = (bearer: string) =>
      get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=ac-001`, { Authorization: `Bearer ${bearer}`, 'X-Service-Reason': 'door check' });

    expect(new Set([stack.config.jwtAudience, stack.config.mcpAudience, stack.config.observationsAudience]).size).toBe(3);
    expect([(await agents(inventoryToken)).status, (await agents(mcpToken)).status, (await agents(exchanged)).status]).toEqual([
      200, 401, 401,
    ]);
    expect([
      (await post(initialize, { Authorization: `Bearer ${inventoryToken}` })).status,
      (await post(initialize, { Authorization: `Bearer ${exchanged}` })).status,
      (await post(initialize, { Authorization: `Bearer ${mcpToken}` })).status,
    ]).toEqual([401, 401, 200]);
    // At the private operation, a user's token passed through is refused and audited (403), not merely unauthenticated.
    expect([(await observe(inventoryToken)).status, (await observe(mcpToken)).status, (await observe(exchanged)).status]).toEqual([
      403, 403, 200,
    ]);
  });

  it('keeps the private path a 404 at the public host', async () => {
    const res = await fetch(`${stack.publicUrl}/api/mcp/endpoint?agent_id=ac-001`, {
      headers: { Authorization: `Bearer ${await stack.brokerToken()}`, 'X-Service-Reason': 'door check' },
    });

    expect(res.status).toBe(404);
  });
});
