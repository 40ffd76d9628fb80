import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ObservationsConfig } from '../../lib/config.js';
import { type AuditItem, putAuditItem } from '../../lib/store/audit.js';
import type { TenantStores } from '../../lib/store/tenant-client.js';
import { tenantAuditSessionPolicy, tenantSessionName, tenantSessionPolicy } from '../../lib/store/tenant-fence.js';
import { auditItemsOf } from '../../local/audit-items.js';
import { loadFleet } from '../../local/fleet.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine } from '../helpers/env.js';
import { eventFixture, testContext } from '../helpers/events.js';
import { invokeStreamed } from '../helpers/streaming.js';
import { type StsStandIn, startStsStandIn } from '../helpers/sts.js';

/**
 * Tenant fencing by IAM, as the functions run it: each tenant's reads and audit puts sign with the
 * credentials of a session of a tenant role, obtained by `sts:AssumeRole` with the tenant's session
 * policy and `tenant` tag. STS is a stand-in here (a local HTTP server speaking its query protocol,
 * test/helpers/sts.ts), which records what it is asked; DynamoDB is the real local engine.
 */

let engine: TestEngine;
let sts: StsStandIn;
// The service's modules as an instance started with each test's variables loads them (test/helpers/env.ts).
// The observations function's store clients and configuration, as it makes them at init.
let clients: TenantStores;
let cfg: ObservationsConfig;
const tenantDynamo = (tenant: string) => clients.forTenant(tenant);
const tenantAuditDynamo = (tenant: string | null) => clients.forAudit(tenant);
let inventory: (
  event: APIGatewayProxyEvent,
  context: Context,
) => Promise<{ statusCode: number; headers?: Record<string, unknown>; body?: string }>;
const READ_ROLE = 'arn:aws:iam::123456789012:role/endpoint-read-service-test-tenant-read';
const AUDIT_ROLE = 'arn:aws:iam::123456789012:role/endpoint-read-service-test-tenant-audit';

beforeAll(async () => {
  engine = await startTestEngine();
  sts = await startStsStandIn(READ_ROLE);
  const tenants = ['acme', 'a*b'];
  await loadFleet(
    engine.db,
    engine.tables,
    {
      tenants: tenants.map((t) => ({
        tenant_id: t,
        agents: [{ agent_id: `${t}-1`, hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }],
      })),
    },
    8,
  );
});
afterAll(async () => {
  await sts?.close();
  await engine?.close();
});

/**
 * Loads the inventory handler and the tenant clients as an instance started with `env` would: STS
 * at the stand-in by the SDK's own variable, signed with the function's credentials from its
 * environment, as Lambda gives them.
 */
async function load(env: Record<string, string>): Promise<void> {
  useEngine(engine, { AWS_ACCESS_KEY_ID: 'function-key', AWS_SECRET_ACCESS_KEY: 'function-secret', AWS_SESSION_TOKEN: undefined, ...env });
  // The streaming handler writes to a response stream of the test's (test/helpers/streaming.ts).
  const streaming = (await import('../../functions/inventory/handler.js')).handler;
  inventory = (event, context) => invokeStreamed(streaming, event, context);
  const { OBSERVATIONS_CONFIG } = await import('../../lib/config.js');
  cfg = OBSERVATIONS_CONFIG.parse(process.env);
  clients = (await import('../../lib/store/tenant-client.js')).tenantStores(cfg);
}

beforeEach(async () => {
  sts.reset();
  await load({
    TENANT_FENCING: 'iam',
    TENANT_READ_ROLE_ARN: READ_ROLE,
    TENANT_AUDIT_ROLE_ARN: AUDIT_ROLE,
    AWS_ENDPOINT_URL_STS: sts.endpoint,
  });
});

const listFor = (tenant: string) =>
  inventory(
    eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
      e.requestContext.authorizer!.tenant = tenant;
    }),
    testContext('inventory'),
  );

const auditItem = (tenant: string | null, id: string): AuditItem => ({
  audit_id: id,
  request_id: id,
  api_request_id: null,
  at: new Date().toISOString(),
  tenant_id: tenant,
  subject: 'alice',
  broker: 'local-broker',
  agent_id: 'a-1',
  scope: null,
  reason: 'checking',
  ticket_number: null,
  ticket_system: null,
  reason_source: 'argument',
  ticket_source: null,
  minutes: 60,
  limit: 100,
  outcome: 'denied',
  status_code: 403,
});

describe('Tenant fencing by IAM: reads (an STS stand-in, the real local engine)', () => {
  it("reads a tenant's inventory with a session of the tenant-read role, tagged with the tenant and fenced to its key prefix", async () => {
    const res = await listFor('acme');

    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body!)).toMatchObject([{ agent_id: 'acme-1' }]);
    expect(sts.calls).toHaveLength(1);
    expect(sts.calls[0]).toMatchObject({
      RoleArn: READ_ROLE,
      RoleSessionName: tenantSessionName('acme'),
      DurationSeconds: '3600',
      tags: ['tenant=acme'],
    });
    expect(JSON.parse(sts.calls[0]!.Policy)).toEqual(tenantSessionPolicy('acme'));
    expect(JSON.parse(sts.calls[0]!.Policy).Statement[0].Condition['ForAllValues:StringLike']).toEqual({
      'dynamodb:LeadingKeys': ['T#acme#*'],
    });
  });

  it('tags a tenant with characters a tag cannot carry by the encoding its keys hold, and fences it to that prefix', async () => {
    const res = await listFor('a*b');

    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body!)).toMatchObject([{ agent_id: 'a*b-1' }]);
    expect(sts.calls[0]!.tags).toEqual(['tenant=a=002Ab']);
    expect(JSON.parse(sts.calls[0]!.Policy).Statement[0].Condition['ForAllValues:StringLike']).toEqual({
      'dynamodb:LeadingKeys': ['T#a=002Ab#*'],
    });
  });

  it('assumes the role once per tenant while its credentials last, and again shortly before they expire', async () => {
    await listFor('acme');
    await listFor('acme');
    await listFor('a*b');
    expect(sts.calls.map((c) => c.RoleSessionName)).toEqual([tenantSessionName('acme'), tenantSessionName('a*b')]);

    // A new instance (fresh modules): no session kept from before.
    await load({
      TENANT_FENCING: 'iam',
      TENANT_READ_ROLE_ARN: READ_ROLE,
      TENANT_AUDIT_ROLE_ARN: AUDIT_ROLE,
      AWS_ENDPOINT_URL_STS: sts.endpoint,
    });
    sts.calls = [];
    sts.expiresInMs = 4 * 60_000; // inside the five minutes before expiry: renewed at the next read
    await listFor('acme');
    await listFor('acme');
    expect(sts.calls).toHaveLength(2);
  });

  it('answers 503 with Retry-After, never an empty list, when STS is unavailable', async () => {
    sts.respond = (res) => {
      res.writeHead(503, { 'Content-Type': 'text/xml' });
      res.end('<ErrorResponse><Error><Type>Receiver</Type><Code>ServiceUnavailable</Code><Message>down</Message></Error></ErrorResponse>');
    };

    const res = await listFor('acme');

    expect(res.statusCode).toBe(503);
    expect(res.headers?.['Retry-After']).toMatch(/^[0-9]+$/);
    expect(res.body).toMatch(/unavailable right now/);
  });

  it('reads with the service client and asks STS nothing when fencing is off', async () => {
    await load({ TENANT_FENCING: 'off' });

    const res = await listFor('acme');

    expect(res.statusCode).toBe(200);
    expect(sts.calls).toHaveLength(0);
    expect(await tenantDynamo('acme')).toBe(await tenantDynamo('globex'));
  });
});

describe('Tenant fencing by IAM: audit puts (an STS stand-in, the real local engine)', () => {
  it("puts a tenant's audit item with a session of the tenant-audit role that may put only into its partition", async () => {
    const db = await tenantAuditDynamo('a b');
    await putAuditItem(db, cfg.auditTable, auditItem('a b', 'audit-fenced-1'));

    expect(sts.calls).toHaveLength(1);
    expect(sts.calls[0]).toMatchObject({
      RoleArn: AUDIT_ROLE,
      RoleSessionName: tenantSessionName('a b', 'audit'),
      tags: ['tenant=a=0020b'],
    });
    expect(JSON.parse(sts.calls[0]!.Policy)).toEqual(tenantAuditSessionPolicy('a b'));
    expect((await auditItemsOf(engine.db, cfg.auditTable, 'a b')).map((i) => i.audit_id)).toEqual(['audit-fenced-1']);
  });

  it('keeps audit sessions apart from read sessions, and each for the hour its credentials last', async () => {
    await tenantDynamo('acme');
    await tenantAuditDynamo('acme');
    await tenantAuditDynamo('acme');
    await tenantDynamo('acme');

    expect(sts.calls.map((c) => c.RoleArn)).toEqual([READ_ROLE, AUDIT_ROLE]);
    expect(await tenantAuditDynamo('acme')).not.toBe(await tenantDynamo('acme'));
  });

  it("puts the audit item of a token that named no tenant with the function's own client, asking STS nothing", async () => {
    const db = await tenantAuditDynamo(null);
    await putAuditItem(db, cfg.auditTable, auditItem(null, 'audit-no-tenant-1'));

    expect(sts.calls).toHaveLength(0);
    expect((await auditItemsOf(engine.db, cfg.auditTable, null)).map((i) => i.audit_id)).toContain('audit-no-tenant-1');
  });

  it('refuses a tenant that is the empty string rather than tag a session with it', async () => {
    await expect(tenantAuditDynamo('')).rejects.toMatchObject({ statusCode: 403 });
    await expect(tenantDynamo('')).rejects.toMatchObject({ statusCode: 403 });
    expect(sts.calls).toHaveLength(0);
  });
});
