import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EndpointList } from '../../lib/contract/mcp-tools.js';
import { EndpointDashboard } from '../../lib/contract/schemas.js';
import { auditItemsOf } from '../../local/audit-items.js';
import { demoFleet } from '../../local/demo.js';
import { call, connectTo, ERAS, recentDemoFleet, textOf, withoutClock } from '../helpers/mcp-client.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { get } from '../helpers/stack.js';

/**
 * The MCP door's two tools end to end, in both protocol eras: the SDK's own client over HTTP
 * against the local stack (the public listener, its emulated authorizer, the MCP function, the
 * token exchange at the local issuer, the private listener and the observations function), seeded
 * with the demo fleet `npm start` serves, for a whole tenant and for a scoped user.
 */

let stack: SharedStack;

beforeAll(async () => {
  stack = await sharedStack(recentDemoFleet(new Date()));
});
afterAll(async () => {
  await stack?.release();
});

const connect = (token: string, options?: (typeof ERAS)[number][1]): Promise<Client> => connectTo(stack.publicUrl, token, options);

/** What the broker reads for the same user and question, straight from the private listener. */
async function directDashboard(agentId: string, subject: string, query = ''): Promise<Record<string, unknown>> {
  const res = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=${encodeURIComponent(agentId)}${query}`, {
    Authorization: `Bearer ${await stack.brokerToken({ tenant: 'acme', subject })}`,
    'X-Service-Reason': 'comparing with the MCP tool',
  });
  expect(res.status).toBe(200);
  return JSON.parse(res.body) as Record<string, unknown>;
}

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
      required: ['agent_id'],
      additionalProperties: false,
      properties: {
        agent_id: { type: 'string', minLength: 1, maxLength: 128 },
        minutes: { type: 'integer', minimum: 5, maximum: 10080 },
        limit: { type: 'integer', minimum: 1, maximum: 500 },
        reason: { type: 'string', minLength: 3, maxLength: 500 },
        ticket: { type: 'object', required: ['system'], properties: { system: { const: 'servicenow' } } },
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
    const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.reason === reason);
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
      'Unknown argument `tenant`; this tool takes agent_id, minutes, limit, reason, ticket.',
    ],
    [
      "another tenant's agent",
      { agent_id: 'gx-001', reason: 'disk alert' },
      'No endpoint with agent_id `gx-001` is visible to you; list_endpoints shows the endpoints you can read.',
    ],
    [
      'an unknown agent',
      { agent_id: 'nope', reason: 'disk alert' },
      'No endpoint with agent_id `nope` is visible to you; list_endpoints shows the endpoints you can read.',
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
      /^More than 1 endpoint with hostname containing `ACME-DB`; the first 1 in inventory order \(the listing stopped there: use a filter, or a higher limit, to see others\):\n- agent_id `ops\/db #1`: hostname `acme-db-1`, OS `linux`\/`x86_64`, version `[^`]+`, /,
    );
    expect(none).toMatchObject({ structuredContent: { endpoints: [], matching: 0 } });
    expect(textOf(none)).toMatch(/^No endpoint with hostname containing `no-such-host` \(the tenant has \d+\)\./);
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
        { type: 'text', text: 'No endpoint with agent_id `ac-001` is visible to you; list_endpoints shows the endpoints you can read.' },
      ],
    });
    const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.reason === reason);
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
