import { gunzipSync } from 'node:zlib';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AgentInventory } from '../../lib/contract/schemas.js';
import { agentSortKey, connectionKey, durableAgentKey } from '../../lib/data-format/keys.js';
import { type FleetAgent, loadFleet } from '../../local/fleet.js';
import { expectResponseMatchesContract } from '../helpers/contract.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine } from '../helpers/env.js';
import { eventFixture, setHeader, testContext } from '../helpers/events.js';
import { listTenantAgentRecords } from '../helpers/store.js';
import { invokeStreamed, type StreamedAnswer } from '../helpers/streaming.js';

type Event = APIGatewayProxyEvent;

// The handler and what the tests watch of it, loaded once the engine's variables are set (useEngine).
let handler: typeof import('../../functions/inventory/handler.js').handler;
let logger: typeof import('../../lib/observability/logger.js').logger;
let authorizerContextOf: typeof import('../../lib/auth/caller.js').authorizerContextOf;

const recent = (): string => new Date(Date.now() - 5_000).toISOString();

function agent(id: string, extra: Partial<FleetAgent> = {}): FleetAgent {
  return { agent_id: id, hostname: `host-${id}`, os: 'linux', arch: 'x86_64', version: '2.4.1', ...extra };
}

/**
 * The inventory as a client receives it, through the stand-in for the Lambda runtime's response
 * stream. `claims`: more claims of the token (the endpoint scope), handed over as the token
 * authorizer hands them (lib/auth/caller.ts authorizerContextOf, every value a string).
 */
async function listAs(tenant: string, acceptEncoding?: string, claims: Record<string, unknown> = {}): Promise<StreamedAnswer> {
  const event = eventFixture<Event>('rest-api', 'list-agents', (e) => {
    const context = authorizerContextOf(
      { sub: 'user-42', exp: 4_102_444_800, tenant_id: tenant, scope: 'endpoints:read', ...claims },
      'tenant_id',
      'endpoint_groups',
    );
    e.requestContext.authorizer = {
      principalId: 'user-42',
      ...Object.fromEntries(Object.entries(context).map(([k, v]) => [k, String(v)])),
    };
    if (acceptEncoding !== undefined) setHeader(e, 'Accept-Encoding', acceptEncoding);
  });
  return invokeStreamed(handler, event, testContext('inventory'));
}

/** The order the store gives: the agents' sort keys (the one key builder) compared as UTF-8 bytes, as DynamoDB compares them. */
const storeOrder = (ids: string[]): string[] =>
  [...ids].sort((a, b) => Buffer.compare(Buffer.from(agentSortKey(a, 'D')), Buffer.from(agentSortKey(b, 'D'))));

describe('Handler: inventory against a real DynamoDB API', () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine();
    useEngine(engine);
    ({ handler } = await import('../../functions/inventory/handler.js'));
    ({ logger } = await import('../../lib/observability/logger.js'));
    ({ authorizerContextOf } = await import('../../lib/auth/caller.js'));
    await loadFleet(
      engine.db,
      engine.tables,
      {
        tenants: [
          {
            tenant_id: 'acme',
            agents: [
              agent('a-2', { connection: { state: 'connected' }, last_heartbeat: recent() }),
              agent('a-1', { client_id: 'c-1', update_ring: 'stable' }),
              agent('conn-only', { durable: false, connection: { state: 'disconnected', disconnected_at: recent() } }),
              agent('shared-id', { hostname: 'acme-box' }),
              agent('ops/db #1'),
              agent('ops/db %231'),
            ],
          },
          {
            tenant_id: 'globex',
            agents: [agent('shared-id', { hostname: 'globex-box' }), agent('g-1')],
          },
          { tenant_id: 'acme#AGENTS', agents: [agent('intruder')] },
        ],
      },
      8,
    );
  });

  afterAll(async () => {
    await engine.close();
  });

  it("lists exactly the caller's tenant, online and offline, in the store's sort-key order", async () => {
    const response = await listAs('acme');

    expect(response.statusCode).toBe(200);
    expect(response.headers['Content-Type']).toBe('application/json; charset=utf-8');
    expect(response.headers['Cache-Control']).toBe('no-store');
    const agents = AgentInventory.parse(JSON.parse(response.body));
    expect(agents.map((a) => a.agent_id)).toEqual(storeOrder(['a-1', 'a-2', 'conn-only', 'ops/db #1', 'ops/db %231', 'shared-id']));
    expect(Object.fromEntries(agents.map((a) => [a.agent_id, a.connection_state]))).toEqual({
      'a-1': 'never_connected',
      'a-2': 'connected',
      'conn-only': 'disconnected',
      'ops/db #1': 'never_connected',
      'ops/db %231': 'never_connected',
      'shared-id': 'never_connected',
    });
  });

  it(`lists ids with punctuation and non-ASCII characters in the order of their sort keys' UTF-8 bytes, whatever the engine`, async () => {
    const ids = [
      'a-1',
      'a#1',
      'a%1',
      'a$1',
      'a 1',
      'a/1',
      'a.1',
      'a~1',
      'A-1',
      'Z',
      'z',
      'ä-1',
      'é',
      'e\u0301',
      '日本',
      '😀',
      '\uFFFD',
      '\uE000',
      'ß',
      'a#',
      'a',
      'a%23',
    ];
    await loadFleet(engine.db, engine.tables, { tenants: [{ tenant_id: 'unicode', agents: ids.map((id) => agent(id)) }] }, 8);

    const listed = AgentInventory.parse(JSON.parse((await listAs('unicode')).body)).map((a) => a.agent_id);

    expect(listed).toEqual(storeOrder(ids));
  });

  it('leaves out stored records it cannot read, lists the rest within the contract, and says how many in a warning log line (the headers are gone by then)', async () => {
    const put = (item: Record<string, unknown>) => engine.db.send(new PutCommand({ TableName: engine.tables.dataTable, Item: item }));
    const hello = { os: 'linux', arch: 'x86_64', version: '1', tenant_id: 'dirty' };
    await loadFleet(
      engine.db,
      engine.tables,
      { tenants: [{ tenant_id: 'dirty', agents: [agent('good-1'), agent('good-2', { connection: { state: 'connected' } })] }] },
      8,
    );
    const longId = 'x'.repeat(129);
    await put({ ...durableAgentKey('dirty', 'empty-arch'), kind: 'agent', agent_id: 'empty-arch', hostname: 'h', ...hello, arch: '' });
    await put({ ...durableAgentKey('dirty', longId), kind: 'agent', agent_id: longId, hostname: 'h', ...hello });
    await put({
      ...connectionKey('dirty', 'bad-state'),
      kind: 'connection',
      agent_id: 'bad-state',
      hostname: 'h',
      ...hello,
      state: 'online',
    });
    await put({ ...durableAgentKey('dirty', 'someone-else'), kind: 'agent', agent_id: 'good-1', hostname: 'impostor', ...hello });
    await put({ ...durableAgentKey('dirty', 'no-kind'), agent_id: 'no-kind', hostname: 'h', ...hello });
    // The request's log lines come from a child of the service's logger: watch its warnings, whatever the log level.
    const warnings: { args: unknown[]; correlationId: unknown }[] = [];
    const createChild = logger.createChild.bind(logger);
    const children = vi.spyOn(logger, 'createChild').mockImplementation((options) => {
      const child = createChild(options);
      vi.spyOn(child, 'warn').mockImplementation(
        (...args: unknown[]) => void warnings.push({ args, correlationId: child.getCorrelationId() }),
      );
      return child;
    });

    let response: StreamedAnswer;
    let clean: StreamedAnswer;
    try {
      response = await listAs('dirty');
      clean = await listAs('acme');
    } finally {
      children.mockRestore();
    }

    expectResponseMatchesContract('listEndpointInventory', { status: response.statusCode, headers: response.headers, body: response.body });
    expect(response.statusCode).toBe(200);
    expect(response.headers).not.toHaveProperty('X-Unreadable-Records');
    expect(AgentInventory.parse(JSON.parse(response.body)).map((a) => [a.agent_id, a.hostname])).toEqual([
      ['good-1', 'host-good-1'],
      ['good-2', 'host-good-2'],
    ]);
    expect(clean.statusCode).toBe(200);
    // Written after the handler returned (the request's keys were reset then), still under the request's correlation id;
    // each left-out record named by its key, so an operator can find it, and none of its values.
    const badKeys = [
      durableAgentKey('dirty', 'empty-arch'),
      durableAgentKey('dirty', longId),
      connectionKey('dirty', 'bad-state'),
      durableAgentKey('dirty', 'someone-else'),
      durableAgentKey('dirty', 'no-kind'),
    ];
    expect(warnings).toEqual([
      {
        args: ['left out stored agent records that cannot be read', { unreadableRecords: 5, keys: expect.arrayContaining(badKeys) }],
        correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    ]);
    expect((warnings[0]!.args[1] as { keys: unknown[] }).keys).toHaveLength(5);
    expect(JSON.stringify(warnings)).not.toMatch(/impostor|online/);
  });

  it('treats the same agent_id in two tenants as two different endpoints', async () => {
    const acme = AgentInventory.parse(JSON.parse((await listAs('acme')).body));
    const globex = AgentInventory.parse(JSON.parse((await listAs('globex')).body));

    expect(acme.find((a) => a.agent_id === 'shared-id')?.hostname).toBe('acme-box');
    expect(globex.find((a) => a.agent_id === 'shared-id')?.hostname).toBe('globex-box');
    expect(globex.map((a) => a.agent_id)).toEqual(storeOrder(['g-1', 'shared-id']));
  });

  it('keeps a tenant whose id contains the key separator out of another tenant', async () => {
    const tricky = AgentInventory.parse(JSON.parse((await listAs('acme#AGENTS')).body));

    expect(tricky.map((a) => a.agent_id)).toEqual(['intruder']);
    expect((await listAs('acme')).body).not.toContain('intruder');
  });

  it('lists a connection-only agent from its hello fields', async () => {
    const agents = AgentInventory.parse(JSON.parse((await listAs('acme')).body));

    const connOnly = agents.find((a) => a.agent_id === 'conn-only');
    expect(connOnly).toEqual({
      agent_id: 'conn-only',
      hostname: 'host-conn-only',
      os: 'linux',
      arch: 'x86_64',
      version: '2.4.1',
      is_online: false,
      connection_state: 'disconnected',
      disconnected_at: expect.any(String),
    });
  });

  it('returns 200 [] for a tenant that has no endpoints', async () => {
    const response = await listAs('nobody');

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual([]);
  });

  it('returns 403 text/plain when the token has no tenant claim, never another tenant', async () => {
    // The authorizer hands over an empty tenant for a token without one (lib/auth/caller.ts).
    const event = eventFixture<Event>('rest-api', 'list-agents', (e) => {
      e.requestContext.authorizer!.tenant = '';
    });

    const response = await invokeStreamed(handler, event, testContext('inventory'));

    expect(response.statusCode).toBe(403);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.headers['Cache-Control']).toBe('no-store');
    expect(response.body).toMatch(/^The token carries no single tenant in its "tenant_id" claim\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('returns 403 when the tenant claim is an array: the authorizer hands over no tenant for it', async () => {
    const context = authorizerContextOf(
      { sub: 'user-42', exp: 4_102_444_800, tenant_id: ['acme', 'globex'], scope: 'endpoints:read' },
      'tenant_id',
      'endpoint_groups',
    );
    const event = eventFixture<Event>('rest-api', 'list-agents', (e) => {
      e.requestContext.authorizer = { principalId: 'user-42', ...context, exp: String(context.exp) };
    });

    const response = await invokeStreamed(handler, event, testContext('inventory'));

    expect(context.tenant).toBe('');
    expect(response.statusCode).toBe(403);
  });

  it("returns 401 with the inventory's challenge when API Gateway serves a cached answer for a token that has since expired", async () => {
    const event = eventFixture<Event>('rest-api', 'list-agents', (e) => {
      e.requestContext.authorizer!.exp = String(Math.floor(Date.now() / 1000) - 1);
    });

    const response = await invokeStreamed(handler, event, testContext('inventory'));

    expect(response.statusCode).toBe(401);
    expect(response.headers['WWW-Authenticate']).toBe(
      `Bearer resource_metadata="${process.env.PUBLIC_URL}/.well-known/oauth-protected-resource/api/agents", scope="endpoints:read", error="invalid_token", error_description="The bearer token has expired."`,
    );
    expect(response.body).toMatch(/^The bearer token has expired\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('follows a tenant whose records exceed one 1 MB Query page to the last page', async () => {
    const big = 1200;
    const padding = 'x'.repeat(900);
    const agents = Array.from({ length: big }, (_, i) =>
      agent(`big-${String(i).padStart(4, '0')}`, {
        hostname: `${padding}-${i}`,
        connection: { state: 'connected' },
        last_heartbeat: recent(),
      }),
    );
    await loadFleet(engine.db, engine.tables, { tenants: [{ tenant_id: 'bigcorp', agents }] }, 8);

    const records = await listTenantAgentRecords(engine.db, engine.tables.dataTable, 'bigcorp');
    const response = await listAs('bigcorp');

    expect(records.pages).toBeGreaterThan(1);
    expect(response.statusCode).toBe(200);
    expect(response.body.length).toBeGreaterThan(1024 * 1024);
    const listed = AgentInventory.parse(JSON.parse(response.body));
    expect(listed).toHaveLength(big);
    expect(listed.map((a) => a.agent_id)).toEqual(storeOrder(agents.map((a) => a.agent_id)));
    expect(listed.every((a) => a.connection_state === 'connected')).toBe(true);

    const compressed = await listAs('bigcorp', 'gzip, deflate');
    expect(compressed.headers['Content-Encoding']).toBe('gzip');
    expect(compressed.headers.Vary).toBe('Accept-Encoding');
    expect(compressed.raw.length).toBeLessThan(response.raw.length / 4);
    expect(gunzipSync(compressed.raw).toString('utf8')).toBe(response.body);
  });

  describe('with an endpoint scope (the endpoint_groups claim)', () => {
    /** Region by position, a role for some, none for every seventh: agents in one group, two, or none. */
    const groupsOfAgent = (i: number): string[] | undefined =>
      i % 7 === 0 ? undefined : [['emea', 'americas', 'apac'][i % 3]!, ...(i % 2 === 0 ? ['servers'] : [])];
    const regional = Array.from({ length: 1200 }, (_, i) =>
      agent(`r-${String(i).padStart(4, '0')}`, { hostname: `${'y'.repeat(900)}-${i}`, groups: groupsOfAgent(i) }),
    );

    beforeAll(async () => {
      await loadFleet(
        engine.db,
        engine.tables,
        {
          tenants: [
            { tenant_id: 'regions', agents: regional },
            {
              tenant_id: 'strict',
              policy: { scope: 'required' },
              agents: [
                agent('s-1', { groups: ['emea'] }),
                agent('s-2', { groups: ['apac'] }),
                agent('s-conn', { durable: false, connection: { state: 'connected' } }),
              ],
            },
          ],
        },
        8,
      );
    });

    const ids = (response: StreamedAnswer): string[] => AgentInventory.parse(JSON.parse(response.body)).map((a) => a.agent_id);

    it("lists only the endpoints in at least one of the groups, in the store's order, across several Query pages, and never shows the groups", async () => {
      const records = await listTenantAgentRecords(engine.db, engine.tables.dataTable, 'regions');
      const expected = regional.filter((a) => a.groups?.some((g) => g === 'apac' || g === 'servers')).map((a) => a.agent_id);

      const response = await listAs('regions', undefined, { endpoint_groups: ['apac', 'servers'] });

      expect(records.pages).toBeGreaterThan(1);
      expectResponseMatchesContract('listEndpointInventory', {
        status: response.statusCode,
        headers: response.headers,
        body: response.body,
      });
      expect(response.statusCode).toBe(200);
      expect(ids(response)).toEqual(storeOrder(expected));
      expect(expected.length).toBeGreaterThan(100);
      expect(expected.length).toBeLessThan(regional.length - 100);
      expect(response.body).not.toContain('groups');
      expect(response.body).not.toContain('servers');
    });

    it('reads the claim as one string of names separated by spaces the same as a list, gzip or not', async () => {
      const asList = await listAs('regions', undefined, { endpoint_groups: ['emea'] });
      const asString = await listAs('regions', 'gzip', { endpoint_groups: 'emea' });

      expect(asString.headers['Content-Encoding']).toBe('gzip');
      expect(gunzipSync(asString.raw).toString('utf8')).toBe(asList.body);
      expect(ids(asList)).toEqual(storeOrder(regional.filter((a) => a.groups?.[0] === 'emea').map((a) => a.agent_id)));
    });

    it('lists the whole tenant for "*" and for a token without the claim, endpoints in no group included', async () => {
      const all = await listAs('regions', undefined, { endpoint_groups: '*' });
      const unscoped = await listAs('regions');

      expect(ids(all)).toEqual(storeOrder(regional.map((a) => a.agent_id)));
      expect(all.body).toBe(unscoped.body);
    });

    it('lists nothing, with 200 [], for groups no endpoint is in (the same answer as an empty tenant)', async () => {
      const response = await listAs('regions', undefined, { endpoint_groups: ['nowhere'] });

      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('[]');
    });

    it('keeps an endpoint known only to the broker (no durable record, so no groups) out of a scoped list', async () => {
      expect(ids(await listAs('strict', undefined, { endpoint_groups: 'emea apac' }))).toEqual(['s-1', 's-2']);
      expect(ids(await listAs('strict', undefined, { endpoint_groups: '*' }))).toEqual(['s-1', 's-2', 's-conn']);
    });

    it('refuses a token without the claim with 403 naming it when the tenant\'s policy says "scope": "required", and serves scoped tokens there', async () => {
      const response = await listAs('strict');

      expect(response.statusCode).toBe(403);
      expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
      expect(response.headers['Cache-Control']).toBe('no-store');
      expect(response.body).toMatch(
        /^This tenant requires an endpoint scope: the token must carry the "endpoint_groups" claim\. \(request id: [0-9a-f-]{36}\)\n$/,
      );
      expect(ids(await listAs('strict', undefined, { endpoint_groups: ['apac'] }))).toEqual(['s-2']);
    });

    it.each<[string, unknown]>([
      ['a number', 7],
      ['an object', { groups: ['emea'] }],
      ['an empty list', []],
      ['an empty string', ''],
      ['a list with a number', ['emea', 1]],
      ['a name over 128 characters', ['z'.repeat(129)]],
    ])('refuses a scope claim that is %s with 403 naming the claim, never the whole tenant', async (_what, claim) => {
      const response = await listAs('regions', undefined, { endpoint_groups: claim });

      expect(response.statusCode).toBe(403);
      expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
      expect(response.headers['Cache-Control']).toBe('no-store');
      expect(response.body).toMatch(
        /^The token's "endpoint_groups" claim must be "\*" or endpoint group names: a list of strings, or one string of names separated by spaces, each 1 to 128 characters\. \(request id: [0-9a-f-]{36}\)\n$/,
      );
    });
  });
});
