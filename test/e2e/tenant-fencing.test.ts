import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantAuditSessionPolicy, tenantSessionPolicy } from '../../lib/store/tenant-fence.js';
import { auditItemsOf } from '../../local/audit-items.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { get } from '../helpers/stack.js';
import { type StsStandIn, startStsStandIn } from '../helpers/sts.js';

/**
 * An observations read through the private listener with TENANT_FENCING=iam, as on AWS: the
 * tenant's data read with a tenant-read session, its audit item put with a tenant-audit session,
 * both asked of an STS stand-in (test/helpers/sts.ts); the engine is the real local one.
 */

const READ_ROLE = 'arn:aws:iam::123456789012:role/endpoint-read-service-test-tenant-read';
const AUDIT_ROLE = 'arn:aws:iam::123456789012:role/endpoint-read-service-test-tenant-audit';

describe('E2E: an observations read with tenant fencing on', () => {
  let sts: StsStandIn;
  let stack: SharedStack;

  beforeAll(async () => {
    sts = await startStsStandIn(READ_ROLE);
    stack = await sharedStack(
      {
        tenants: ['müller gmbh', 'globex'].map((tenant_id) => ({
          tenant_id,
          agents: [{ agent_id: 'web 1', hostname: 'web-1', os: 'linux', arch: 'x86_64', version: '1' }],
        })),
      },
      { TENANT_FENCING: 'iam', TENANT_READ_ROLE_ARN: READ_ROLE, TENANT_AUDIT_ROLE_ARN: AUDIT_ROLE, AWS_ENDPOINT_URL_STS: sts.endpoint },
    );
  });
  afterAll(async () => {
    await stack?.release();
    await sts?.close();
  });

  const observe = async (tenant: string | undefined) =>
    get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=${encodeURIComponent('web 1')}`, {
      Authorization: `Bearer ${await stack.brokerToken({ tenant, subject: 'alice' })}`,
      'X-Service-Reason': 'checking disk space',
    });

  it("reads with the tenant's read session and audits with its audit session, each tagged with the tenant as its keys hold it", async () => {
    sts.reset();

    const res = await observe('müller gmbh');

    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ endpoint: { id: 'web 1', hostname: 'web-1' } });
    expect(sts.calls.map((c) => [c.RoleArn, c.tags])).toEqual([
      [READ_ROLE, ['tenant=m=00FCller=0020gmbh']],
      [AUDIT_ROLE, ['tenant=m=00FCller=0020gmbh']],
    ]);
    expect(JSON.parse(sts.calls[0]!.Policy)).toEqual(tenantSessionPolicy('müller gmbh'));
    expect(JSON.parse(sts.calls[1]!.Policy)).toEqual(tenantAuditSessionPolicy('müller gmbh'));
    const items = await auditItemsOf(stack.dynamo, stack.config.auditTable, 'müller gmbh');
    expect(items.map((i) => i.audit_id)).toEqual([res.headers.get('x-audit-id')]);
  });

  it('audits a token that names no tenant into the no-tenant partition without any tenant session', async () => {
    sts.reset();

    const res = await observe(undefined);

    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(sts.calls).toEqual([]);
    const items = await auditItemsOf(stack.dynamo, stack.config.auditTable, null);
    expect(items.map((i) => i.audit_id)).toContain(res.headers.get('x-audit-id'));
  });

  it('refuses the read with a 503 and no data when the audit session cannot be had', async () => {
    sts.reset();
    const credentials = sts.respond;
    // The read session is granted; the audit session is not (STS unavailable).
    sts.respond = (response) => {
      if (sts.calls.at(-1)?.RoleArn === READ_ROLE) return credentials(response);
      response.writeHead(503, { 'Content-Type': 'text/xml' });
      response.end(
        '<ErrorResponse><Error><Type>Receiver</Type><Code>ServiceUnavailable</Code><Message>down</Message></Error></ErrorResponse>',
      );
    };

    const res = await observe('globex');

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    expect(res.body).toMatch(/could not be audited/);
    expect(sts.calls.map((c) => c.RoleArn)).toEqual([READ_ROLE, AUDIT_ROLE, AUDIT_ROLE]);
  });
});
