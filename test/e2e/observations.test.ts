import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROKER_REFUSALS } from '../../lib/auth/broker.js';
import { encodedReasonHeaders } from '../../lib/contract/attribution.js';
import { EndpointDashboard } from '../../lib/contract/schemas.js';
import { auditItemsOf } from '../../local/audit-items.js';
import { sampleSeries } from '../../local/demo.js';
import type { Fleet } from '../../local/fleet.js';
import { ensureTables } from '../../local/tables.js';
import { expectResponseMatchesContract } from '../helpers/contract.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { get } from '../helpers/stack.js';

/**
 * The private observations operation end to end, its whole contract on one stack: success, the
 * 400s of its query and attribution headers, the 401/403/404s, the endpoint scope, the audit.
 * Longer than one concern's file on purpose: each group needs the same seeded fleet and broker, and
 * a file per group would start a stack (engine, issuer, sandboxes) per group for the same answers.
 */

const now = Date.now();
const minute = Math.floor(now / 60_000) * 60_000;
const ago = (seconds: number): string => new Date(now - seconds * 1000).toISOString();
const rnd = (): number => 0.5;

const agent = (id: string, extra: object = {}) => ({
  agent_id: id,
  hostname: `host-${id}`,
  os: 'linux',
  arch: 'x86_64',
  version: '2.4.1',
  ...extra,
});
const online = { last_heartbeat: ago(5), connection: { state: 'connected' as const } };

const FLEET: Fleet = {
  tenants: [
    {
      tenant_id: 'acme',
      agents: [
        agent('healthy', { ...online, client_name: 'Contoso', groups: ['emea', 'servers'], samples: sampleSeries(minute, 30, 'ok', rnd) }),
        agent('disk-high', { ...online, groups: ['americas'], samples: sampleSeries(minute, 30, 'warning', rnd) }),
        agent('cpu-hot', { ...online, samples: sampleSeries(minute, 300, 'critical', rnd) }),
        agent('silent', { ...online }),
        agent('went-quiet', { ...online, samples: sampleSeries(minute - 3 * 3_600_000, 10, 'ok', rnd) }),
        agent('offline', { connection: { state: 'disconnected', disconnected_at: ago(600) }, samples: sampleSeries(minute, 5, 'ok', rnd) }),
        agent('zero', { ...online, samples: [{ observed_at: new Date(minute).toISOString(), cpu: 0, memory: null, disk: 0 }] }),
      ],
    },
    {
      tenant_id: 'globex',
      policy: { ticket: 'required' },
      agents: [agent('g-1', { ...online, samples: sampleSeries(minute, 5, 'ok', rnd) })],
    },
    {
      tenant_id: 'initech',
      policy: { scope: 'required' },
      agents: [agent('i-1', { ...online, groups: ['emea'], samples: sampleSeries(minute, 5, 'ok', rnd) })],
    },
  ],
};

describe('E2E: GET /api/mcp/endpoint on the private loopback listener', () => {
  let stack: SharedStack;
  let token: string;

  beforeAll(async () => {
    stack = await sharedStack(FLEET);
    token = await stack.brokerToken({ tenant: 'acme', subject: 'alice' });
  });
  afterAll(async () => {
    await stack?.release();
  });

  const observe = (query: string, headers: Record<string, string> = {}, bearer: string | null = token) =>
    get(`${stack.privateUrl}/api/mcp/endpoint?${query}`, {
      ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
      'X-Service-Reason': 'checking disk space',
      ...headers,
    });

  const expectFailure = (res: { status: number; headers: Headers; body: string }, status: number, sentence: string): void => {
    expect({ status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control') }).toEqual({
      status,
      type: 'text/plain; charset=utf-8',
      cache: 'no-store',
    });
    expect(res.body).toMatch(new RegExp(`^${sentence.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(request id: [0-9a-f-]{36}\\)\\n$`));
  };

  describe('success', () => {
    it('returns an ok dashboard with the three metrics, history and no findings', async () => {
      const res = await observe('agent_id=healthy');

      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('x-audit-id')).toMatch(/^[0-9a-f-]{36}$/);
      const dashboard = EndpointDashboard.parse(JSON.parse(res.body));
      expect(dashboard.status).toBe('ok');
      expect(dashboard.endpoint).toEqual({
        id: 'healthy',
        hostname: 'host-healthy',
        os: 'linux',
        client_name: 'Contoso',
        last_heartbeat: ago(5),
      });
      expect(dashboard.metrics?.map((m) => [m.key, m.status])).toEqual([
        ['cpu', 'ok'],
        ['memory', 'ok'],
        ['disk', 'ok'],
      ]);
      expect(dashboard.history).toHaveLength(30);
      expect(dashboard.findings).toEqual([]);
      expect(dashboard.window_minutes).toBe(60);
      expect(dashboard.observed_at).toBe(new Date(minute).toISOString());
    });

    it('returns a warning dashboard for high disk', async () => {
      const dashboard = EndpointDashboard.parse(JSON.parse((await observe('agent_id=disk-high')).body));

      expect(dashboard.status).toBe('warning');
      expect(dashboard.findings?.map((f) => [f.scope, f.status])).toEqual([['metric', 'warning']]);
    });

    it('returns a critical dashboard and downsamples history to limit buckets', async () => {
      const dashboard = EndpointDashboard.parse(JSON.parse((await observe('agent_id=cpu-hot&minutes=300&limit=10')).body));

      expect(dashboard.status).toBe('critical');
      expect(dashboard.window_minutes).toBe(300);
      expect(dashboard.history?.length).toBeLessThanOrEqual(10);
      expect(dashboard.history?.length).toBeGreaterThanOrEqual(9);
      expect(dashboard.metrics?.[0]).toMatchObject({ key: 'cpu', status: 'critical' });
    });

    it('returns unknown with null metrics and history for an endpoint that never reported', async () => {
      const dashboard = EndpointDashboard.parse(JSON.parse((await observe('agent_id=silent')).body));

      expect(dashboard).toMatchObject({ status: 'unknown', metrics: null, history: null, observed_at: null, expires_at: null });
      expect(dashboard.findings?.map((f) => [f.scope, f.status])).toEqual([['observation', 'unknown']]);
    });

    it('returns unknown metrics valued null, never 0, when the window is empty but the endpoint reported before', async () => {
      const dashboard = EndpointDashboard.parse(JSON.parse((await observe('agent_id=went-quiet')).body));

      expect(dashboard.status).toBe('unknown');
      expect(dashboard.history).toEqual([]);
      expect(dashboard.metrics?.map((m) => [m.value, m.status])).toEqual([
        [null, 'unknown'],
        [null, 'unknown'],
        [null, 'unknown'],
      ]);
    });

    it('reads a real 0 as ok and a missing memory value as unknown', async () => {
      const dashboard = EndpointDashboard.parse(JSON.parse((await observe('agent_id=zero')).body));

      expect(dashboard.metrics?.map((m) => [m.key, m.value, m.status])).toEqual([
        ['cpu', 0, 'ok'],
        ['memory', null, 'unknown'],
        ['disk', 0, 'ok'],
      ]);
      expect(dashboard.status).toBe('unknown');
    });

    it('warns that a disconnected endpoint is not connected', async () => {
      const dashboard = EndpointDashboard.parse(JSON.parse((await observe('agent_id=offline')).body));

      expect(dashboard.status).toBe('warning');
      expect(dashboard.findings?.[0]).toMatchObject({ scope: 'connectivity', status: 'warning' });
    });

    it('accepts a ticket pair with the configured system', async () => {
      const res = await observe('agent_id=healthy', { 'X-Service-Ticket-Number': 'INC0012345', 'X-Service-Ticket-System': 'servicenow' });

      expect(res.status).toBe(200);
    });
  });

  describe('400: the query and the attribution headers', () => {
    it.each([
      ['', 'Query parameter agent_id is required and must be 1 to 128 characters.'],
      ['agent_id=', 'Query parameter agent_id is required and must be 1 to 128 characters.'],
      [`agent_id=${'x'.repeat(129)}`, 'Query parameter agent_id is required and must be 1 to 128 characters.'],
      ['agent_id=healthy&minutes=5.5', 'Query parameter minutes must be a whole number from 5 to 10080.'],
      ['agent_id=healthy&minutes=1e2', 'Query parameter minutes must be a whole number from 5 to 10080.'],
      ['agent_id=healthy&minutes=%2B5', 'Query parameter minutes must be a whole number from 5 to 10080.'],
      ['agent_id=healthy&minutes=', 'Query parameter minutes must be a whole number from 5 to 10080.'],
      ['agent_id=healthy&minutes=4', 'Query parameter minutes must be a whole number from 5 to 10080.'],
      ['agent_id=healthy&minutes=10081', 'Query parameter minutes must be a whole number from 5 to 10080.'],
      ['agent_id=healthy&minutes=-5', 'Query parameter minutes must be a whole number from 5 to 10080.'],
      ['agent_id=healthy&limit=0', 'Query parameter limit must be a whole number from 1 to 500.'],
      ['agent_id=healthy&limit=501', 'Query parameter limit must be a whole number from 1 to 500.'],
      ['agent_id=healthy&limit=ten', 'Query parameter limit must be a whole number from 1 to 500.'],
      ['agent_id=healthy&agent_id=other', 'The query parameter agent_id was sent more than once.'],
      ['agent_id=healthy&minutes=60&minutes=60', 'The query parameter minutes was sent more than once.'],
      ['agent_id=healthy&minute=60', 'Unknown query parameter "minute".'],
    ])('returns 400 for ?%s', async (query, sentence) => {
      expectFailure(await observe(query), 400, sentence);
    });

    it.each([
      [
        { 'X-Service-Reason': '' },
        'X-Service-Reason is blank: say why the endpoint is read, with at least 3 visible characters (spaces, control and invisible characters do not count).',
      ],
      [{ 'X-Service-Reason': '  ab  ' }, 'X-Service-Reason is too short: it has 2 visible characters, and at least 3 are needed.'],
      [
        { 'X-Service-Reason': 'r'.repeat(501) },
        'X-Service-Reason is too long: it has 501 characters after trimming, and at most 500 are allowed.',
      ],
      [
        { 'X-Service-Reason': encodeURIComponent('\u0000\u200b\u200b\u0000'), 'X-Service-Reason-Encoding': 'percent' },
        'X-Service-Reason is blank: say why the endpoint is read, with at least 3 visible characters (spaces, control and invisible characters do not count).',
      ],
      [
        { 'X-Service-Reason': encodeURIComponent('o\u200bk\u202e'), 'X-Service-Reason-Encoding': 'percent' },
        'X-Service-Reason is too short: it has 2 visible characters, and at least 3 are needed.',
      ],
      [{ 'X-Service-Ticket-Number': 'INC1' }, 'X-Service-Ticket-Number and X-Service-Ticket-System must be sent together.'],
      [{ 'X-Service-Ticket-System': 'servicenow' }, 'X-Service-Ticket-Number and X-Service-Ticket-System must be sent together.'],
      [{ 'X-Service-Ticket-Number': 'INC1', 'X-Service-Ticket-System': 'jira' }, 'X-Service-Ticket-System must be "servicenow".'],
      [
        { 'X-Service-Ticket-Number': '-INC1', 'X-Service-Ticket-System': 'servicenow' },
        'X-Service-Ticket-Number has characters outside its pattern.',
      ],
      [
        { 'X-Service-Ticket-Number': 'INC 1', 'X-Service-Ticket-System': 'servicenow' },
        'X-Service-Ticket-Number has characters outside its pattern.',
      ],
    ])('returns 400 for attribution %j', async (headers, sentence) => {
      expectFailure(await observe('agent_id=healthy', headers), 400, sentence);
    });

    it.each([
      ['an unknown encoding', { 'X-Service-Reason': 'checking%20disk', 'X-Service-Reason-Encoding': 'base64' }],
      ['a truncated UTF-8 sequence', { 'X-Service-Reason': 'disk%E2%82', 'X-Service-Reason-Encoding': 'percent' }],
      ['a stray percent sign', { 'X-Service-Reason': '100% full', 'X-Service-Reason-Encoding': 'percent' }],
    ])('returns 400 for a percent-encoded reason with %s', async (_what, headers) => {
      expectFailure(
        await observe('agent_id=healthy', headers),
        400,
        'X-Service-Reason-Encoding must be "percent" and X-Service-Reason valid percent-encoded UTF-8.',
      );
    });

    it.each([
      [
        'a source outside its words',
        { 'X-Service-Attribution-Source': 'reason=model' },
        'X-Service-Attribution-Source must be "reason=<source>" or "reason=<source>, ticket=<source>", each source one of argument, person, declined, cancelled.',
      ],
      [
        'no reason member',
        { 'X-Service-Attribution-Source': 'ticket=person' },
        'X-Service-Attribution-Source must be "reason=<source>" or "reason=<source>, ticket=<source>", each source one of argument, person, declined, cancelled.',
      ],
      [
        'a member twice',
        { 'X-Service-Attribution-Source': 'reason=person, reason=argument' },
        'X-Service-Attribution-Source must be "reason=<source>" or "reason=<source>, ticket=<source>", each source one of argument, person, declined, cancelled.',
      ],
      [
        'a ticket source without a ticket',
        { 'X-Service-Attribution-Source': 'reason=argument, ticket=person' },
        'X-Service-Attribution-Source names a ticket source exactly when a ticket is sent.',
      ],
      [
        'a ticket without its source',
        { 'X-Service-Attribution-Source': 'reason=argument', 'X-Service-Ticket-Number': 'INC1', 'X-Service-Ticket-System': 'servicenow' },
        'X-Service-Attribution-Source names a ticket source exactly when a ticket is sent.',
      ],
    ])('returns 400 for X-Service-Attribution-Source with %s', async (_what, headers, sentence) => {
      expectFailure(await observe('agent_id=healthy', headers), 400, sentence);
    });

    it('returns 400 when X-Service-Reason is missing', async () => {
      const res = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=healthy`, { Authorization: `Bearer ${token}` });

      expectFailure(res, 400, 'X-Service-Reason is required: say why the endpoint is read, in 3 to 500 characters.');
    });

    it('returns 400 when an attribution header is repeated', async () => {
      // fetch would join repeats into one line; node:http sends two real header lines.
      const { request } = await import('node:http');
      const res = await new Promise<{ status: number; headers: Headers; body: string }>((resolve, reject) => {
        const req = request(
          `${stack.privateUrl}/api/mcp/endpoint?agent_id=healthy`,
          { headers: { Authorization: `Bearer ${token}` } },
          (r) => {
            let body = '';
            r.on('data', (c: Buffer) => (body += c.toString()));
            r.on('end', () => {
              const headers = new Headers();
              for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') headers.set(k, v);
              resolve({ status: r.statusCode ?? 0, headers, body });
            });
          },
        );
        req.setHeader('X-Service-Reason', ['first reason', 'second reason']);
        req.on('error', reject);
        req.end();
      });

      expectFailure(res, 400, 'The X-Service-Reason header was sent more than once.');
      expectResponseMatchesContract('getEndpointObservations', res);
    });
  });

  it('answers arbitrary query strings with 200, 400 or 404 and never a 500 (fuzz over HTTP)', async () => {
    const raw = fc.string({
      unit: fc.constantFrom(
        'a',
        'g',
        'e',
        'n',
        't',
        '_',
        'i',
        'd',
        'm',
        'u',
        's',
        'l',
        '=',
        '&',
        '%',
        '2',
        '5',
        '0',
        '1',
        '+',
        '-',
        '.',
        'é',
        ' ',
      ),
      maxLength: 40,
    });
    const prefixed = fc.oneof(
      raw,
      raw.map((q) => `agent_id=healthy&${q}`),
      raw.map((q) => `agent_id=${q}`),
    );
    await fc.assert(
      fc.asyncProperty(prefixed, async (query) => {
        const res = await observe(query.replace(/ /g, '%20'));
        return [200, 400, 404].includes(res.status);
      }),
      { numRuns: 60 },
    );
  });

  describe('401, 403 and 404', () => {
    it('returns 401 with a Bearer challenge without a token, or with an expired or malformed one (another door\'s expired token too): error="invalid_token" only for a token that was sent (RFC 6750 §3.1)', async () => {
      const expired = await stack.brokerToken({ expiresInSeconds: -30 });
      const expiredMcp = await stack.mcpToken({ expiresInSeconds: -30 });
      const invalid = (sentence: string) => `Bearer error="invalid_token", error_description="${sentence}"`;

      for (const [bearer, sentence, challenge] of [
        [null, 'A bearer token is required.', 'Bearer'],
        [expired, 'The bearer token has expired.', invalid('The bearer token has expired.')],
        [expiredMcp, 'The bearer token has expired.', invalid('The bearer token has expired.')],
        ['garbage', 'The bearer token is malformed.', invalid('The bearer token is malformed.')],
      ] as const) {
        const res = await observe('agent_id=healthy', {}, bearer);
        expectFailure(res, 401, sentence);
        expect(res.headers.get('www-authenticate')).toBe(challenge);
      }
    });

    it('refuses with 403 a token the issuer made for another service (another audience, the MCP door), even one naming the broker, and audits it under its tenant and subject', async () => {
      const actor = { act: { sub: 'local-broker' } };
      const inventorySubject = `inventory-passthrough-${now}`;
      const mcpSubject = `mcp-passthrough-${now}`;
      const inventoryToken = await stack.token({ subject: inventorySubject, audience: 'another-service', extra: actor });
      const mcpToken = await stack.mcpToken({ subject: mcpSubject, tenant: 'globex' });

      expectFailure(
        await observe('agent_id=healthy', { 'X-Service-Reason': 'passed through' }, inventoryToken),
        403,
        BROKER_REFUSALS.passthrough,
      );
      expectFailure(
        await observe('agent_id=healthy', { 'X-Service-Reason': 'passed through' }, mcpToken),
        403,
        BROKER_REFUSALS.passthrough,
      );
      const acme = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === inventorySubject);
      const globex = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'globex')).filter((i) => i.subject === mcpSubject);
      expect(acme).toEqual([expect.objectContaining({ tenant_id: 'acme', outcome: 'denied', status_code: 403 })]);
      expect(globex).toEqual([expect.objectContaining({ tenant_id: 'globex', broker: null, outcome: 'denied', status_code: 403 })]);
    });

    it("refuses with 403 a user's own token passed through (the right audience, but no broker as actor), and audits it", async () => {
      const subject = `passthrough-${now}`;
      const userToken = await stack.token({ subject, audience: stack.config.observationsAudience });

      const res = await observe('agent_id=healthy', {}, userToken);

      expectFailure(res, 403, BROKER_REFUSALS.missing);
      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);
      expect(items).toEqual([expect.objectContaining({ broker: null, outcome: 'denied', status_code: 403, agent_id: null })]);
    });

    it('returns 403 for a valid token without a tenant claim', async () => {
      expectFailure(
        await observe('agent_id=healthy', {}, await stack.brokerToken({ tenant: undefined })),
        403,
        'The token carries no single tenant in its "tenant_id" claim.',
      );
    });

    it('returns 403 when the broker named by the token is not on the allow-list, and records that broker', async () => {
      const subject = `other-broker-${now}`;
      const res = await observe('agent_id=healthy', {}, await stack.brokerToken({ subject, client: 'some-other-client' }));

      expectFailure(res, 403, BROKER_REFUSALS.notAllowed);
      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);
      expect(items).toEqual([expect.objectContaining({ broker: 'some-other-client', outcome: 'denied', status_code: 403 })]);
    });

    it.each([
      ['no scope', undefined],
      ['an empty scope', ''],
      ["the public doors' scope instead", 'endpoints:read'],
      ['its scope separated from another by a tab (RFC 6749: single spaces only)', 'openid\tobservations:read'],
    ])("refuses with 403 insufficient_scope the broker's token with %s, naming observations:read, and audits it", async (_what, scope) => {
      const subject = `scope-${String(scope)}-${now}`;
      const exchanged = await stack.brokerToken({ subject, scope });

      const res = await observe('agent_id=healthy', {}, exchanged);

      expectFailure(
        res,
        403,
        `${BROKER_REFUSALS.scope} "observations:read" that this door requires: the broker asks for it in its token exchange.`,
      );
      expect(res.headers.get('www-authenticate')).toBe(
        'Bearer error="insufficient_scope", scope="observations:read", error_description="The token lacks the scope observations:read."',
      );
      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);
      expect(items).toEqual([expect.objectContaining({ broker: 'local-broker', outcome: 'denied', status_code: 403 })]);
    });

    it('reads the broker from the claim BROKER_CLAIM names (azp for an on-behalf-of issuer)', async () => {
      const previous = stack.updateEnvironment({ BROKER_CLAIM: 'azp' });
      try {
        // An on-behalf-of issuer (Entra ID) grants the scope in `scp`.
        const onBehalfOf = await stack.token({
          audience: stack.config.observationsAudience,
          scope: undefined,
          extra: { azp: 'local-broker', scp: ['observations:read'] },
        });
        expect((await observe('agent_id=healthy', {}, onBehalfOf)).status).toBe(200);
        // The actor claim no longer counts once the deployment names azp.
        expectFailure(await observe('agent_id=healthy', {}, token), 403, BROKER_REFUSALS.missing);
      } finally {
        stack.updateEnvironment(previous);
      }
    });

    it('returns 403 without a ticket when the tenant policy requires one, and 200 with it', async () => {
      const globex = await stack.brokerToken({ tenant: 'globex' });

      expectFailure(
        await observe('agent_id=g-1', {}, globex),
        403,
        'This tenant requires a ticket: send X-Service-Ticket-Number and X-Service-Ticket-System.',
      );
      const ok = await observe('agent_id=g-1', { 'X-Service-Ticket-Number': 'CHG0042', 'X-Service-Ticket-System': 'servicenow' }, globex);
      expect(ok.status).toBe(200);
    });

    it("returns the same 404 for an unknown agent and another tenant's agent", async () => {
      const unknown = await observe('agent_id=nope');
      const foreign = await observe('agent_id=g-1');

      expectFailure(unknown, 404, 'No endpoint with that agent_id is visible to you.');
      expectFailure(foreign, 404, 'No endpoint with that agent_id is visible to you.');
      expect(unknown.body.replace(/request id: [0-9a-f-]+/, '')).toBe(foreign.body.replace(/request id: [0-9a-f-]+/, ''));
    });
  });

  describe('endpoint scope (the endpoint_groups claim the exchange copied)', () => {
    const auditOf = async (tenant: string, subject: string) =>
      (await auditItemsOf(stack.dynamo, stack.config.auditTable, tenant)).filter((i) => i.subject === subject);

    it("reads an endpoint in one of the token's groups, answers one outside them with the unknown endpoint's 404, and audits both with the scope", async () => {
      const subject = `scoped-${now}`;
      const scoped = await stack.brokerToken({ subject, groups: ['emea', 'kiosks'] });

      const inScope = await observe('agent_id=healthy', {}, scoped);
      const outside = await observe('agent_id=disk-high', {}, scoped);
      const unknown = await observe('agent_id=nope', {}, scoped);

      expect(inScope.status).toBe(200);
      expectFailure(outside, 404, 'No endpoint with that agent_id is visible to you.');
      expect(outside.body.replace(/request id: [0-9a-f-]+/, '')).toBe(unknown.body.replace(/request id: [0-9a-f-]+/, ''));
      expect((await auditOf('acme', subject)).map((i) => [i.agent_id, i.scope, i.outcome, i.status_code]).sort()).toEqual([
        ['disk-high', ['emea', 'kiosks'], 'denied', 404],
        ['healthy', ['emea', 'kiosks'], 'allowed', 200],
        ['nope', ['emea', 'kiosks'], 'denied', 404],
      ]);
    });

    it('reads the space-separated form and "*" as the issuer wrote them, and audits a token without the claim with scope null', async () => {
      const subject = `scope-forms-${now}`;

      expect((await observe('agent_id=disk-high', {}, await stack.brokerToken({ subject, groups: 'servers americas' }))).status).toBe(200);
      expect((await observe('agent_id=disk-high', {}, await stack.brokerToken({ subject, groups: '*' }))).status).toBe(200);
      expect((await observe('agent_id=disk-high', {}, await stack.brokerToken({ subject }))).status).toBe(200);
      expect((await auditOf('acme', subject)).map((i) => JSON.stringify(i.scope)).sort()).toEqual([
        '"*"',
        '["americas","servers"]',
        'null',
      ]);
    });

    it.each<[string, unknown]>([
      ['a number', 3],
      ['an empty list', []],
      ['a list with a number', ['emea', 3]],
      ['a name over 128 characters', ['q'.repeat(129)]],
    ])('refuses a scope claim that is %s with 403 naming the claim, and audits it', async (what, claim) => {
      const subject = `bad-scope-${what.replace(/\W/g, '-')}-${now}`;

      const res = await observe('agent_id=healthy', {}, await stack.brokerToken({ subject, groups: claim }));

      expectFailure(
        res,
        403,
        'The token\'s "endpoint_groups" claim must be "*" or endpoint group names: a list of strings, or one string of names separated by spaces, each 1 to 128 characters.',
      );
      expect(await auditOf('acme', subject)).toEqual([expect.objectContaining({ scope: 'invalid', outcome: 'denied', status_code: 403 })]);
    });

    it('refuses a token without the claim at a tenant whose policy requires a scope (403 naming the claim, audited), and reads with it', async () => {
      const subject = `scope-required-${now}`;

      const refused = await observe('agent_id=i-1', {}, await stack.brokerToken({ tenant: 'initech', subject }));
      const allowed = await observe('agent_id=i-1', {}, await stack.brokerToken({ tenant: 'initech', subject, groups: ['emea'] }));

      expectFailure(refused, 403, 'This tenant requires an endpoint scope: the token must carry the "endpoint_groups" claim.');
      expect(allowed.status).toBe(200);
      expect((await auditOf('initech', subject)).map((i) => [i.scope, i.status_code]).sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
        [['emea'], 200],
        [null, 403],
      ]);
    });
  });

  describe('audit', () => {
    it('leaves exactly one audit item per successful read, named by X-Audit-Id', async () => {
      const subject = `auditor-${now}`;
      const bearer = await stack.brokerToken({ tenant: 'acme', subject });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await observe('agent_id=healthy&minutes=30&limit=7', { 'X-Service-Reason': `read number ${i}` }, bearer);
        expect(res.status).toBe(200);
        ids.push(res.headers.get('x-audit-id') as string);
      }

      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);

      expect(items.map((i) => i.audit_id).sort()).toEqual([...ids].sort());
      expect(new Set(ids).size).toBe(3);
      expect(items[0]).toMatchObject({
        tenant_id: 'acme',
        subject,
        broker: 'local-broker',
        agent_id: 'healthy',
        minutes: 30,
        limit: 7,
        outcome: 'allowed',
        status_code: 200,
        ticket_number: null,
      });
      expect(items.map((i) => i.reason).sort()).toEqual(['read number 0', 'read number 1', 'read number 2']);
    });

    it('records a percent-encoded reason in any script exactly as meant, line breaks included, and a literal one as sent', async () => {
      const subject = `encoded-${now}`;
      const bearer = await stack.brokerToken({ tenant: 'acme', subject });
      const meant = 'Disk läuft voll — 磁盘快满了 ✓\nsecond line: 100% sure';

      const encoded = await observe('agent_id=healthy', encodedReasonHeaders(meant), bearer);
      const literal = await observe('agent_id=healthy', { 'X-Service-Reason': '100% literal, no encoding header' }, bearer);

      expect([encoded.status, literal.status]).toEqual([200, 200]);
      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);
      expect(items.map((i) => i.reason).sort()).toEqual(['100% literal, no encoding header', meant].sort());
    });

    it('names a refused read in its failure text by the request_id its audit item carries', async () => {
      const subject = `quoted-${now}`;
      const res = await observe('agent_id=nope', {}, await stack.brokerToken({ tenant: 'acme', subject }));
      const quoted = /\(request id: ([0-9a-f-]{36})\)/.exec(res.body)?.[1];

      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);

      expect(quoted).toBeDefined();
      expect(items).toEqual([expect.objectContaining({ request_id: quoted, audit_id: quoted, status_code: 404 })]);
      expect(items[0]!.api_request_id).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('records where the reason and the ticket came from as X-Service-Attribution-Source says, and null without it', async () => {
      const subject = `sources-${now}`;
      const bearer = await stack.brokerToken({ tenant: 'acme', subject });
      const ticket = { 'X-Service-Ticket-Number': 'INC7', 'X-Service-Ticket-System': 'servicenow' };

      const said = await observe(
        'agent_id=healthy',
        { ...ticket, 'X-Service-Attribution-Source': 'reason=person, ticket=argument' },
        bearer,
      );
      const unsaid = await observe('agent_id=healthy', { 'X-Service-Reason': 'no source said' }, bearer);

      expect([said.status, unsaid.status]).toEqual([200, 200]);
      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);
      expect(items.map((i) => [i.reason, i.reason_source, i.ticket_number, i.ticket_source]).sort()).toEqual([
        ['checking disk space', 'person', 'INC7', 'argument'],
        ['no source said', null, null, null],
      ]);
    });

    it.each([
      ['declined', 'The person declined to give a ticket: nothing was read.'],
      ['cancelled', 'The person cancelled the question for a ticket: nothing was read.'],
    ])(
      'refuses with 403 a request whose person %s the question, before any read (an unknown agent is not looked up), and audits it',
      async (source, sentence) => {
        const subject = `person-${source}-${now}`;
        const bearer = await stack.brokerToken({ tenant: 'globex', subject });

        const res = await observe('agent_id=nope', { 'X-Service-Attribution-Source': `reason=argument, ticket=${source}` }, bearer);

        expectFailure(res, 403, sentence);
        const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'globex')).filter((i) => i.subject === subject);
        expect(items).toEqual([
          expect.objectContaining({
            agent_id: 'nope',
            reason: 'checking disk space',
            reason_source: 'argument',
            ticket_number: null,
            ticket_source: source,
            outcome: 'denied',
            status_code: 403,
          }),
        ]);
      },
    );

    it("refuses a declined reason without the reason header (403, not the missing reason's 400), and audits it with no reason", async () => {
      const subject = `person-no-reason-${now}`;
      const res = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=healthy`, {
        Authorization: `Bearer ${await stack.brokerToken({ tenant: 'acme', subject })}`,
        'X-Service-Attribution-Source': 'reason=declined',
      });

      expectFailure(res, 403, 'The person declined to give a reason: nothing was read.');
      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);
      expect(items).toEqual([expect.objectContaining({ reason: null, reason_source: 'declined', outcome: 'denied', status_code: 403 })]);
    });

    it('audits authenticated refusals, and not requests without a valid token', async () => {
      const subject = `refused-${now}`;
      const bearer = await stack.brokerToken({ tenant: 'acme', subject });
      await observe('agent_id=nope', {}, bearer);
      await observe('agent_id=healthy&limit=0', {}, bearer);
      await observe('agent_id=healthy', {}, await stack.brokerToken({ tenant: 'acme', subject, expiresInSeconds: -5 }));

      const items = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === subject);

      expect(items.map((i) => [i.outcome, i.status_code]).sort()).toEqual([
        ['denied', 400],
        ['denied', 404],
      ]);
    });

    it('returns 503 with Retry-After and no data when the audit write fails (audit table gone)', async () => {
      const cfg = stack.config;
      await stack.dynamo.send(new DeleteTableCommand({ TableName: cfg.auditTable }) as never);
      try {
        const res = await observe('agent_id=healthy');

        expectFailure(res, 503, 'The read could not be audited, so no data was returned; try again later.');
        expect(res.headers.get('retry-after')).toMatch(/^[0-9]+$/);
        expect(res.headers.get('x-audit-id')).toBeNull();
        expect(res.body).not.toContain('host-healthy');
        expect(res.body).not.toContain('metrics');
        // A refusal stays what it is: retrying would not help the client (docs/decisions.md).
        expectFailure(await observe('agent_id=nope'), 404, 'No endpoint with that agent_id is visible to you.');
      } finally {
        await ensureTables(stack.dynamo, cfg);
      }
    });
  });
});
