import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { demoFleet } from '../../infra/local/demo.js';
import type { Fleet } from '../../infra/local/fleet.js';
import { BROKER_REFUSALS } from '../../lib/auth/broker.js';
import { config } from '../../lib/config.js';
import { EndpointList } from '../../lib/contract/mcp-tools.js';
import { EndpointDashboard } from '../../lib/contract/schemas.js';
import { METRIC } from '../../lib/observability/metrics.js';
import { listAuditItems } from '../../lib/store/audit.js';
import { eventFixture, testContext } from '../helpers/events.js';
import { closedPortEndpoint } from '../helpers/faults.js';
import { get, startTestStack, type TestStack } from '../helpers/stack.js';

/**
 * The MCP door end to end: the SDK's own client over HTTP against the local stack (the public
 * listener, its emulated authorizer, the MCP handler, the token exchange at the local issuer, the
 * private listener and the observations handler), seeded with the demo fleet `npm start` serves.
 */

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

const ERAS = [
  ['a 2025-era client (initialize handshake)', undefined, '2025-11-25'],
  ['a 2026-07-28 client (stateless, no handshake)', { versionNegotiation: { mode: 'auto' as const } }, '2026-07-28'],
] as const;

let stack: TestStack;

/**
 * The demo fleet with only its last three hours of samples: the tools here read the default
 * 60-minute window (and the agent whose samples are two hours old), and the demo's day of samples
 * would take seconds of CPU to seed.
 */
function recentDemoFleet(now: Date): Fleet {
  const since = now.getTime() - 3 * 3_600_000;
  return {
    tenants: demoFleet(now).tenants.map((tenant) => ({
      ...tenant,
      agents: (tenant.agents ?? []).map((agent) =>
        agent.samples ? { ...agent, samples: agent.samples.filter((s) => Date.parse(s.observed_at) >= since) } : agent,
      ),
    })),
  };
}

beforeAll(async () => {
  stack = await startTestStack(recentDemoFleet(new Date()));
});
afterAll(async () => {
  await stack?.stop();
});

async function connect(token: string, options?: (typeof ERAS)[number][1]): Promise<Client> {
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' }, options);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.publicUrl}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

const textOf = (result: ToolResult): string => result.content.map((c) => c.text ?? '').join('\n');

/** What the broker reads for the same user and question, straight from the private listener. */
async function directDashboard(agentId: string, subject: string, query = ''): Promise<Record<string, unknown>> {
  const res = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=${encodeURIComponent(agentId)}${query}`, {
    Authorization: `Bearer ${await stack.brokerToken({ tenant: 'acme', subject })}`,
    'X-Service-Reason': 'comparing with the MCP tool',
  });
  expect(res.status).toBe(200);
  return JSON.parse(res.body) as Record<string, unknown>;
}

const withoutClock = ({ evaluated_at: _at, ...rest }: Record<string, unknown>): Record<string, unknown> => rest;

describe.each(ERAS)('E2E: MCP tools over HTTP with %s', (_era, options, revision) => {
  let client: Client;
  const subject = `mcp-user-${revision}`;

  beforeAll(async () => {
    client = await connect(await stack.mcpToken({ tenant: 'acme', subject }), options);
  });
  afterAll(async () => {
    await client?.close();
  });

  it(`speaks protocol revision ${revision}`, () => {
    expect(client.getNegotiatedProtocolVersion()).toBe(revision);
  });

  it('lists both tools, read-only, with input and output schemas built from the contract', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const observations = byName.get('observations')!;
    const list = byName.get('list_endpoints')!;

    expect([...byName.keys()].sort()).toEqual(['list_endpoints', 'observations']);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    }
    expect(observations.inputSchema).toMatchObject({
      type: 'object',
      required: ['agent_id', 'reason'],
      additionalProperties: false,
      properties: {
        agent_id: { type: 'string', minLength: 1, maxLength: 128 },
        minutes: { type: 'integer', minimum: 5, maximum: 10080 },
        limit: { type: 'integer', minimum: 1, maximum: 500 },
        reason: { type: 'string', minLength: 3, maxLength: 500 },
        ticket: { type: 'object', required: ['number', 'system'], properties: { system: { const: 'servicenow' } } },
      },
    });
    expect(Object.keys((observations.outputSchema as { properties: object }).properties)).toEqual(Object.keys(EndpointDashboard.shape));
    expect(list.inputSchema).toMatchObject({
      type: 'object',
      properties: { connection_state: { enum: ['connected', 'stale', 'disconnected', 'never_connected'] } },
    });
    expect(Object.keys((list.outputSchema as { properties: object }).properties)).toEqual(['endpoints', 'matching', 'total', 'truncated']);
  });

  it.each([
    ['ac-001', 'ok'],
    ['ac-002', 'warning'],
    ['ac-003', 'critical'],
    ['ac-004', 'unknown'],
    ['ac-005', 'unknown'],
    ['ac-007', 'warning'],
    ['ac-009', 'unknown'],
  ])('reads %s (%s) exactly as the private operation returns it', async (agentId, status) => {
    // Two reads a few milliseconds apart may straddle a sample at the window's edge: read both again once if so.
    let direct = await directDashboard(agentId, subject, '&limit=30');
    let result = await call(client, 'observations', { agent_id: agentId, limit: 30, reason: 'routine health check' });
    if (JSON.stringify(withoutClock(direct)) !== JSON.stringify(withoutClock(result.structuredContent ?? {}))) {
      direct = await directDashboard(agentId, subject, '&limit=30');
      result = await call(client, 'observations', { agent_id: agentId, limit: 30, reason: 'routine health check' });
    }

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status });
    expect(withoutClock(result.structuredContent!)).toEqual(withoutClock(direct));
    expect(JSON.parse(result.content[1]!.text!)).toEqual(result.structuredContent);
  });

  it('summarises missing data as unknown, never as healthy or zero', async () => {
    const neverReported = await call(client, 'observations', { agent_id: 'ac-009', reason: 'why is it silent' });
    const memoryMissing = await call(client, 'observations', { agent_id: 'ac-004', reason: 'memory check' });
    const quiet = await call(client, 'observations', { agent_id: 'ac-005', reason: 'gone quiet?' });

    expect(textOf(neverReported)).toMatch(/Metrics: unknown\. The endpoint has never reported/);
    expect(textOf(memoryMissing)).toContain('Memory usage unknown (not reported)');
    expect(textOf(quiet)).toMatch(/Metrics: unknown\. No observation in the last 60 minutes/);
    for (const result of [neverReported, memoryMissing, quiet]) {
      expect(result.content[0]!.text).toContain('overall status unknown');
      // "healthy" only ever as "not healthy"; a missing value never as 0%.
      expect(result.content[0]!.text!.toLowerCase()).not.toMatch(/(?<!not )healthy|\b0%/);
    }
  });

  it('leaves an audit item naming the broker from the exchanged token, the user, and the reason in any script unchanged', async () => {
    const reason = `Kunde meldet volle Platte — 磁盘 ✓ (${revision})\n– second line, 100% meant`;

    const result = await call(client, 'observations', { agent_id: 'ac-002', reason, ticket: { number: 'INC0042', system: 'servicenow' } });

    expect(result.isError).toBeFalsy();
    const items = (await listAuditItems(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.reason === reason);
    expect(items).toEqual([
      expect.objectContaining({
        tenant_id: 'acme',
        subject,
        broker: 'local-broker',
        agent_id: 'ac-002',
        ticket_number: 'INC0042',
        ticket_system: 'servicenow',
        outcome: 'allowed',
        status_code: 200,
      }),
    ]);
  });

  it.each([
    ['no reason', { agent_id: 'ac-001' }, 'reason is required: say why the endpoint is read, in 3 to 500 characters.'],
    [
      'a blank reason',
      { agent_id: 'ac-001', reason: '   ' },
      'reason is blank: say why the endpoint is read, with at least 3 visible characters (spaces, control and invisible characters do not count).',
    ],
    [
      'a reason of invisible characters only (NUL, zero-width space)',
      { agent_id: 'ac-001', reason: '\u0000\u200b\u200b\u0000\u202e' },
      'reason is blank: say why the endpoint is read, with at least 3 visible characters (spaces, control and invisible characters do not count).',
    ],
    [
      'a reason with two visible characters',
      { agent_id: 'ac-001', reason: 'o\u200bk' },
      'reason is too short: it has 2 visible characters, and at least 3 are needed.',
    ],
    [
      'a reason of 501 characters',
      { agent_id: 'ac-001', reason: 'r'.repeat(501) },
      'reason is too long: it has 501 characters after trimming, and at most 500 are allowed.',
    ],
    [
      'a reason that is not text',
      { agent_id: 'ac-001', reason: 42 },
      'reason is required: say why the endpoint is read, in 3 to 500 characters.',
    ],
    [
      'half a ticket pair',
      { agent_id: 'ac-001', reason: 'disk alert', ticket: { number: 'INC1' } },
      'ticket needs both number (up to 100 letters, digits and ._:/#- characters, starting with a letter or digit) and system "servicenow".',
    ],
    [
      'another ticket system',
      { agent_id: 'ac-001', reason: 'disk alert', ticket: { number: 'INC1', system: 'jira' } },
      'ticket needs both number (up to 100 letters, digits and ._:/#- characters, starting with a letter or digit) and system "servicenow".',
    ],
    ['minutes out of bounds', { agent_id: 'ac-001', reason: 'disk alert', minutes: 4 }, 'minutes must be a whole number from 5 to 10080.'],
    ['an empty agent_id', { agent_id: '', reason: 'disk alert' }, 'agent_id is required and must be 1 to 128 characters.'],
    [
      'an unknown argument',
      { agent_id: 'ac-001', reason: 'disk alert', tenant: 'globex' },
      'Unknown argument "tenant"; this tool takes agent_id, minutes, limit, reason, ticket.',
    ],
    [
      "another tenant's agent",
      { agent_id: 'gx-001', reason: 'disk alert' },
      'No endpoint with agent_id "gx-001" is visible to you; list_endpoints shows the endpoints you can read.',
    ],
    [
      'an unknown agent',
      { agent_id: 'nope', reason: 'disk alert' },
      'No endpoint with agent_id "nope" is visible to you; list_endpoints shows the endpoints you can read.',
    ],
  ])('answers %s with an error result of one sentence', async (_what, args, sentence) => {
    const result = await call(client, 'observations', args);

    expect(result).toEqual({
      content: [{ type: 'text', text: sentence }],
      isError: true,
      ...('_meta' in result ? { _meta: result._meta } : {}),
    });
  });

  it('names the ticket argument and its two fields when the tenant requires a ticket, and reads the dashboard with one', async () => {
    const globex = await connect(await stack.mcpToken({ tenant: 'globex', subject }), options);
    try {
      const refused = await call(globex, 'observations', { agent_id: 'gx-002', reason: 'disk alert' });
      const allowed = await call(globex, 'observations', {
        agent_id: 'gx-002',
        reason: 'disk alert',
        ticket: { number: 'CHG0042', system: 'servicenow' },
      });

      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(
        /^This tenant requires a ticket for every read: call observations again with the ticket argument, an object with its two fields number \(your ticket number, e\.g\. INC0012345\) and system "servicenow"\. \(request id: [0-9a-f-]{36}\)$/,
      );
      expect(allowed.isError).toBeFalsy();
      expect(allowed.structuredContent).toMatchObject({ endpoint: { id: 'gx-002' } });
    } finally {
      await globex.close();
    }
  });

  it("lists the caller's endpoints only, filtered by connection state and hostname, and says how many match when it read them all", async () => {
    const all = await call(client, 'list_endpoints', { limit: 500 });
    const stale = await call(client, 'list_endpoints', { connection_state: 'stale' });
    const byHost = await call(client, 'list_endpoints', { hostname: 'ACME-DB', limit: 1 });
    const none = await call(client, 'list_endpoints', { hostname: 'no-such-host' });

    const everything = EndpointList.parse(all.structuredContent);
    expect(everything.endpoints.every((a) => a.agent_id.startsWith('ac-') || a.agent_id.startsWith('ops/'))).toBe(true);
    expect(everything).toMatchObject({ total: everything.endpoints.length, matching: everything.endpoints.length, truncated: false });
    expect(EndpointList.parse(stale.structuredContent).endpoints.map((a) => a.connection_state)).toEqual([
      'stale',
      'stale',
      'stale',
      'stale',
      'stale',
    ]);
    // Stopped at the second match: how many match in all is not known, so it is null, not a guess.
    expect(EndpointList.parse(byHost.structuredContent)).toMatchObject({
      matching: null,
      total: null,
      truncated: true,
      endpoints: [{ hostname: 'acme-db-1' }],
    });
    expect(textOf(byHost)).toMatch(
      /^More than 1 endpoint with hostname containing "ACME-DB"; the first 1 in inventory order \(the listing stopped there: use a filter, or a higher limit, to see others\):\n- agent_id "ops\/db #1": hostname "acme-db-1", OS "linux"\/"x86_64", version "[^"]+", /,
    );
    expect(none).toMatchObject({ structuredContent: { endpoints: [], matching: 0 } });
    expect(textOf(none)).toMatch(/^No endpoint with hostname containing "no-such-host" \(the tenant has \d+\)\./);
    expect(none.isError).toBeFalsy();
  });

  it('answers arguments that are not an object with one sentence, not a schema dump', async () => {
    await expect(
      client.request({ method: 'tools/call', params: { name: 'list_endpoints', arguments: 'all of them' } } as never),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(
        /The arguments of tools\/call must be a JSON object of named values, such as \{"agent_id": "…", "reason": "…"\}; got a string\.$/,
      ),
    });
  });

  it('cannot connect with an expired MCP token, nor with a token for another door', async () => {
    // The SDK client gives up on the gateway's 401 (it has no OAuth provider to retry with): the
    // 2025 client quotes the answer's sentence, the negotiating one its status.
    const refused = /HTTP 401|A valid bearer token issued for this MCP server is required/;
    await expect(connect(await stack.mcpToken({ tenant: 'acme', subject, expiresInSeconds: -30 }), options)).rejects.toThrow(refused);
    await expect(connect(await stack.token({ tenant: 'acme', subject }), options)).rejects.toThrow(refused);
    await expect(connect(await stack.brokerToken({ tenant: 'acme', subject }), options)).rejects.toThrow(refused);
  });

  it('answers an unknown tool with a JSON-RPC error, not a result', async () => {
    await expect(client.callTool({ name: 'delete_endpoint', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });
});

describe('E2E: MCP tools with a scoped user token (the exchange copies the endpoint_groups claim)', () => {
  let scoped: Client;
  let unscoped: Client;
  const subject = 'mcp-scoped-user';

  beforeAll(async () => {
    scoped = await connect(await stack.mcpToken({ tenant: 'acme', subject, extra: { endpoint_groups: ['americas'] } }), {
      versionNegotiation: { mode: 'auto' },
    });
    unscoped = await connect(await stack.mcpToken({ tenant: 'acme', subject: 'mcp-unscoped-user' }), {
      versionNegotiation: { mode: 'auto' },
    });
  });
  afterAll(async () => {
    await scoped?.close();
    await unscoped?.close();
  });

  it("lists only the endpoints in the token's groups, in the inventory's order, and counts only those", async () => {
    const acme = (demoFleet(new Date()).tenants ?? []).find((t) => t.tenant_id === 'acme')?.agents ?? [];
    const americas = new Set(acme.filter((a) => a.groups?.includes('americas')).map((a) => a.agent_id));

    const mine = EndpointList.parse((await call(scoped, 'list_endpoints', { limit: 500 })).structuredContent);
    const all = EndpointList.parse((await call(unscoped, 'list_endpoints', { limit: 500 })).structuredContent);

    expect(mine.endpoints.map((a) => a.agent_id)).toEqual(all.endpoints.map((a) => a.agent_id).filter((id) => americas.has(id)));
    expect(mine).toMatchObject({ total: americas.size, matching: americas.size, truncated: false });
    expect(all.endpoints.length).toBeGreaterThan(americas.size);
    expect(JSON.stringify(mine)).not.toContain('groups');
  });

  it('reads an endpoint in its groups, answers one outside them as not found, and the service audits the scope the exchanged token carried', async () => {
    const reason = 'scoped read through the MCP door';

    const inside = await call(scoped, 'observations', { agent_id: 'ac-030', reason });
    const outside = await call(scoped, 'observations', { agent_id: 'ac-001', reason });

    expect(inside.isError).toBeFalsy();
    expect(inside.structuredContent).toMatchObject({ endpoint: { id: 'ac-030' } });
    expect(outside).toMatchObject({
      isError: true,
      content: [
        { type: 'text', text: 'No endpoint with agent_id "ac-001" is visible to you; list_endpoints shows the endpoints you can read.' },
      ],
    });
    const items = (await listAuditItems(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.reason === reason);
    expect(items.map((i) => [i.agent_id, i.subject, i.scope, i.status_code]).sort()).toEqual([
      ['ac-001', subject, ['americas'], 404],
      ['ac-030', subject, ['americas'], 200],
    ]);
  });

  it('refuses a token whose scope claim is not a list of names with 403 naming the claim', async () => {
    const res = await fetch(`${stack.publicUrl}/api/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${await stack.mcpToken({ extra: { endpoint_groups: { all: true } } })}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toMatch(
      /^The token's "endpoint_groups" claim must be "\*" or endpoint group names: .* \(request id: [0-9a-f-]{36}\)\n$/,
    );
  });
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
    expect(await foreign.text()).toMatch(/^Requests from this Origin are not allowed/);
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

      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('vary')).toBe('Origin');
      expect(await res.text()).toMatch(/^Requests from this Origin are not allowed; set MCP_ALLOWED_ORIGINS to admit it\. \(request id: /);
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

    // The handler called in-process (no gateway can hand it an event without a caller) reads this process's configuration.
    const metadata = `${config().publicUrl}/.well-known/oauth-protected-resource/api/mcp`;
    expect(presented.statusCode).toBe(401);
    expect(presented.headers['WWW-Authenticate']).toBe(
      `Bearer resource_metadata="${metadata}", error="invalid_token", error_description="A bearer token checked by the token authorizer is required."`,
    );
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['WWW-Authenticate']).toBe(`Bearer resource_metadata="${metadata}"`);
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
      `Bearer resource_metadata="${stack.publicUrl}/.well-known/oauth-protected-resource/api/mcp"`,
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

describe('E2E: upstream failures reach the assistant as one sentence, never as an empty success', () => {
  let client: Client;
  let quiet: Record<string, string | undefined>;

  beforeAll(async () => {
    // The functions' EMF lines and error logs on for the group, which counts them (misconfigurationsDuring).
    quiet = stack.updateEnvironment({ POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_LOG_LEVEL: 'ERROR' });
    client = await connect(await stack.mcpToken({ tenant: 'acme', subject: 'dave' }));
  });
  afterAll(async () => {
    await client?.close();
    stack.updateEnvironment(quiet);
  });

  /** Runs `fn` with the stack's environment changed (its functions restarted with it), then puts it back. */
  async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
    const previous = stack.updateEnvironment(env);
    try {
      return await fn();
    } finally {
      stack.updateEnvironment(previous);
    }
  }

  /**
   * How often `fn` made the MCP door log and count a broker misconfiguration (the alarm's metric),
   * read from the lines the functions write (their EMF metric lines and error logs are on in this group).
   */
  async function misconfigurationsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; counted: number; logged: number }> {
    const lines: string[] = [];
    const capture = (chunk: string | Uint8Array): boolean => {
      lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    };
    const written = [
      vi.spyOn(process.stdout, 'write').mockImplementation(capture),
      vi.spyOn(process.stderr, 'write').mockImplementation(capture),
    ];
    try {
      const result = await fn();
      const records = lines
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const counts = records.filter((r) => '_aws' in r).map((r) => [r[METRIC.brokerMisconfigurations] ?? []].flat().length);
      return {
        result,
        counted: counts.reduce((sum, n) => sum + n, 0),
        logged: records.filter((r) => r.message === 'broker misconfiguration').length,
      };
    } finally {
      for (const spy of written) spy.mockRestore();
    }
  }

  it('says the services are unavailable, with when to retry, when the data store is down', async () => {
    const down = { DYNAMODB_ENDPOINT: await closedPortEndpoint(), DYNAMODB_MAX_ATTEMPTS: '1', DYNAMODB_TIMEOUT_MS: '500' };

    const [observations, list] = await withEnv(down, async () => [
      await call(client, 'observations', { agent_id: 'ac-001', reason: 'store down?' }),
      await call(client, 'list_endpoints', {}),
    ]);

    expect(observations).toMatchObject({
      isError: true,
      content: [{ text: 'The observations service is unavailable right now; try again in 5 s.' }],
    });
    expect(list).toMatchObject({ isError: true, content: [{ text: 'The inventory is unavailable right now; try again in 5 s.' }] });
    expect(observations.structuredContent).toBeUndefined();
  });

  it("gives the service's sentence when it refuses the broker, and logs and counts the misconfiguration", async () => {
    const { result, counted, logged } = await misconfigurationsDuring(() =>
      withEnv({ BROKER_ALLOW_LIST: 'some-other-broker' }, () =>
        call(client, 'observations', { agent_id: 'ac-001', reason: 'broker check' }),
      ),
    );

    expect({ counted, logged }).toEqual({ counted: 1, logged: 1 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      new RegExp(`^${BROKER_REFUSALS.notAllowed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(request id: [0-9a-f-]{36}\\)$`),
    );
  });

  it('says the MCP service is misconfigured when the issuer refuses its client secret', async () => {
    const other = await connect(await stack.mcpToken({ tenant: 'acme', subject: 'erin' }));
    try {
      const { result, counted } = await misconfigurationsDuring(() =>
        withEnv({ BROKER_CLIENT_SECRET: 'not-the-secret' }, () =>
          call(other, 'observations', { agent_id: 'ac-001', reason: 'secret check' }),
        ),
      );

      expect(counted).toBe(1);
      expect(result).toMatchObject({
        isError: true,
        content: [{ text: expect.stringMatching(/^The MCP service is not set up correctly to read observations for you/) }],
      });
    } finally {
      await other.close();
    }
  });

  describe('from a fake gateway in front of the private operation (faults no real service gives on demand)', () => {
    let gateway: Server;
    let answer: (res: import('node:http').ServerResponse) => void = () => undefined;
    let direct: Record<string, string | undefined>;

    beforeAll(async () => {
      gateway = createServer((_req, res) => answer(res));
      await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
      // The MCP function reaches the fake gateway for the whole group (one new instance for it).
      direct = stack.updateEnvironment({
        OBSERVATIONS_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/api/mcp/endpoint`,
      });
    });
    afterAll(async () => {
      stack.updateEnvironment(direct);
      gateway.closeAllConnections();
      await new Promise((resolve) => gateway.close(resolve));
    });

    const viaGateway = async (env: Record<string, string> = {}): Promise<ToolResult> => {
      const fresh = await connect(await stack.mcpToken({ tenant: 'acme', subject: `gw-${Math.random()}` }));
      try {
        return await withEnv(env, () => call(fresh, 'observations', { agent_id: 'ac-001', reason: 'gateway fault' }));
      } finally {
        await fresh.close();
      }
    };

    it.each([
      [
        'a 403 from the API policy, naming an ARN',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(403, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'AccessDeniedException' });
          res.end(
            '{"Message":"User: anonymous is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:eu-west-1:123456789012:abc/prod/GET/api/mcp/endpoint"}',
          );
        },
        /^The MCP service is not set up correctly to read observations for you/,
        1,
      ],
      [
        'a 401 for the exchanged token',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8', 'WWW-Authenticate': 'Bearer' });
          res.end('The bearer token is not for this service (audience). (request id: 0b0f0e8e-7d47-4f0b-9b1a-5f8c4d1e2a3b)\n');
        },
        /^The MCP service is not set up correctly to read observations for you/,
        1,
      ],
      [
        'a 502 with an HTML page',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(502, { 'Content-Type': 'text/html' });
          res.end('<html><body>Bad Gateway</body></html>');
        },
        /^The observations service failed to answer; try again later\.$/,
        0,
      ],
      [
        'a 503 with Retry-After',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '7' });
          res.end('The observations store is unavailable right now; try again later. (request id: 1)\n');
        },
        /^The observations service is unavailable right now; try again in 7 s\.$/,
        0,
      ],
      [
        'a 504',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(504, { 'Content-Type': 'application/json' });
          res.end('{"message": "Endpoint request timed out"}');
        },
        /^The observations service did not answer in time; try again in 5 s\.$/,
        0,
      ],
      [
        'a 200 whose body is not a dashboard',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end('{"schema":"endpoint-dashboard/v1","status":"ok"}');
        },
        /^The observations service answered with data that could not be read; try again later\.$/,
        0,
      ],
    ])('turns %s into an error result', async (_what, respond, sentence, misconfigurations) => {
      answer = respond;

      const { result, counted } = await misconfigurationsDuring(() => viaGateway());

      expect(counted).toBe(misconfigurations);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(sentence);
      expect(textOf(result)).not.toMatch(/arn:|<html|execute-api/);
      expect(result.structuredContent).toBeUndefined();
    });

    it('stops waiting at its deadline and says so', async () => {
      answer = () => undefined; // never answers

      const result = await viaGateway({ UPSTREAM_TIMEOUT_MS: '1000' });

      expect(result).toMatchObject({
        isError: true,
        content: [{ text: 'The observations service did not answer in time; try again in 5 s.' }],
      });
    });
  });
});
