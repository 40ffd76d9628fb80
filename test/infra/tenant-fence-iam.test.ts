import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { agentsPartition, auditPartition, policyKey, samplesPartition } from '../../lib/data-format/keys.js';
import { type FenceKind, tenantSessionRequest } from '../../lib/store/tenant-fence.js';
import { type Decision, decide, resolveIntrinsics, sessionArn, type TemplateRole, templateRoles } from '../helpers/iam.js';
import { type Json, packagedTemplate } from '../helpers/package.js';

/**
 * The tenant fence, judged by an independent IAM evaluator (`@cloud-copilot/iam-simulate`), not by
 * a matcher of our own: the role policies and trust policies exactly as `npm run package` writes
 * them (CloudFormation intrinsics resolved to a made-up account, test/helpers/iam.ts), and the
 * session policy and session tag exactly as the code asks STS for them (`tenantSessionRequest`).
 *
 * What the evaluator is given by hand, because it models single requests and not STS: the link
 * from a session tag passed to `sts:AssumeRole` to `aws:PrincipalTag/tenant` on the session's
 * later requests, and the keys of each request (`dynamodb:LeadingKeys`, as DynamoDB sets them:
 * every partition key the request names).
 */

let roles: Record<string, TemplateRole>;
let dataTable: string;
let auditTable: string;

beforeAll(async () => {
  // Packaged once per run, started by the template project's global setup (test/helpers/template-setup.ts).
  const { template } = await packagedTemplate(inject('packagingDir'));
  roles = templateRoles(template);
  const tables = template.Resources as Json;
  dataTable = resolveIntrinsics({ 'Fn::GetAtt': ['DataTable', 'Arn'] }, tables) as string;
  auditTable = resolveIntrinsics({ 'Fn::GetAtt': ['AuditTable', 'Arn'] }, tables) as string;
}, 300_000); // waits for the run's packaging, which may still be going

/** Tenant ids as issuers write them, the awkward ones favoured. */
const TENANTS = [
  'acme',
  'acme2',
  'a',
  'a*',
  'ab',
  'a?',
  'a$',
  '${aws:username}',
  '{x}',
  'a#b',
  '100%',
  'ops/eu',
  'back\\slash',
  'say "hi"',
  "o'brien",
  'two words',
  'a b',
  'a=0020b',
  'müller',
  '東京',
  '😀',
  'x'.repeat(128),
  'é'.repeat(128),
  '=sha256:x',
];

const READS = ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem'] as const;
const REWRITES = ['dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'] as const;

/** A tenant's session of a tenant role, as tenant-client asks STS for it. */
interface Session {
  principal: string;
  tag: Record<string, string>;
  sessionPolicy: Json;
}
function sessionOf(role: TemplateRole, tenant: string, fence: FenceKind): Session {
  const asked = tenantSessionRequest(tenant, fence);
  return {
    principal: sessionArn(role, asked.RoleSessionName),
    tag: Object.fromEntries(asked.Tags.map((t) => [`aws:PrincipalTag/${t.Key}`, t.Value])),
    sessionPolicy: JSON.parse(asked.Policy) as Json,
  };
}

/** One request of a tenant's session; `policies` replaces the role's own (for the widened copies). */
async function ask(
  role: TemplateRole,
  session: Session,
  action: string,
  table: string,
  leadingKeys: string[] | undefined,
  withSessionPolicy: boolean,
  policies = role.policies,
): Promise<Decision> {
  return decide({
    principal: session.principal,
    action,
    resource: table,
    context: { ...session.tag, ...(leadingKeys ? { 'dynamodb:LeadingKeys': leadingKeys } : {}) },
    identityPolicies: policies,
    ...(withSessionPolicy ? { sessionPolicy: session.sessionPolicy } : {}),
  });
}

const ownKeys = (tenant: string): string[] => [agentsPartition(tenant), samplesPartition(tenant, 'a-1'), policyKey(tenant).pk];
const foreignKeys = (other: string): string[] => [agentsPartition(other), samplesPartition(other, 'a-1')];

/** Every read a tenant's session should be refused: each other tenant's keys, alone and mixed with its own. */
async function foreignReadsAllowed(tenant: string, withSessionPolicy: boolean, policies?: TemplateRole['policies']): Promise<string[]> {
  const role = roles.TenantReadRole!;
  const session = sessionOf(role, tenant, 'read');
  const allowed: string[] = [];
  for (const other of TENANTS) {
    if (other === tenant) continue;
    for (const action of READS) {
      const requests =
        action === 'dynamodb:BatchGetItem'
          ? [[agentsPartition(tenant), agentsPartition(other)], foreignKeys(other)]
          : foreignKeys(other).map((k) => [k]);
      for (const keys of requests) {
        if ((await ask(role, session, action, dataTable, keys, withSessionPolicy, policies)) === 'Allowed')
          allowed.push(`${action} ${JSON.stringify(keys)}`);
      }
    }
  }
  return allowed;
}

const sessionPolicyCases = [
  ['without a session policy', false],
  ['with the session policy the code sends', true],
] as const;

describe('IAM fence: tenant-read sessions (role policy from the packaged template, evaluated by iam-simulate)', () => {
  describe.each(sessionPolicyCases)('%s', (_, withSessionPolicy) => {
    it.each(TENANTS)('reads every key of tenant %j with Query, GetItem and BatchGetItem', async (tenant) => {
      const role = roles.TenantReadRole!;
      const session = sessionOf(role, tenant, 'read');
      const refused: string[] = [];

      for (const action of READS) {
        const requests = action === 'dynamodb:BatchGetItem' ? [ownKeys(tenant)] : ownKeys(tenant).map((k) => [k]);
        for (const keys of requests) {
          const decision = await ask(role, session, action, dataTable, keys, withSessionPolicy);
          if (decision !== 'Allowed') refused.push(`${action} ${JSON.stringify(keys)}: ${decision}`);
        }
      }

      expect(refused).toEqual([]);
    });

    it.each(TENANTS)("refuses tenant %j's session every other tenant's keys, alone or mixed with its own", async (tenant) => {
      expect(await foreignReadsAllowed(tenant, withSessionPolicy)).toEqual([]);
    });

    it('refuses a read that names no partition key, and every Scan', async () => {
      const role = roles.TenantReadRole!;
      const session = sessionOf(role, 'acme', 'read');

      for (const action of READS) expect(await ask(role, session, action, dataTable, undefined, withSessionPolicy)).not.toBe('Allowed');
      expect(await ask(role, session, 'dynamodb:Scan', dataTable, undefined, withSessionPolicy)).not.toBe('Allowed');
    });
  });

  it('allows a session with no tenant tag nothing, even with a session policy', async () => {
    const role = roles.TenantReadRole!;
    const untagged = { ...sessionOf(role, 'acme', 'read'), tag: {} };

    for (const action of READS) {
      expect(await ask(role, untagged, action, dataTable, [agentsPartition('acme')], true)).toBe('ImplicitlyDenied');
      expect(await ask(role, untagged, action, dataTable, [agentsPartition('acme')], false)).toBe('ImplicitlyDenied');
    }
  });

  it('fences random tenants to their own keys, with and without the session policy (property)', async () => {
    const role = roles.TenantReadRole!;
    const anyTenant = fc.string({
      unit: fc.oneof(
        fc.constantFrom('*', '?', '$', '{', '}', '#', '%', '/', '\\', '"', "'", ' ', '=', 'a', 'b', 'é'),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      ),
      minLength: 1,
      maxLength: 40,
    });
    await fc.assert(
      fc.asyncProperty(anyTenant, anyTenant, fc.constantFrom(...READS), fc.boolean(), async (tenant, other, action, withSessionPolicy) => {
        fc.pre(tenant !== other);
        // Each id is also an agent id in a key, kept as itself above `$` (escapeId). iam-simulate turns
        // `*` into a JavaScript `.*`, which stops at U+2028/U+2029 (\n and \r are escaped in keys):
        // its answer for those is a refusal, which says nothing about IAM's `*`, so they are left out.
        fc.pre(!/[\u2028\u2029]/.test(tenant + other));
        const session = sessionOf(role, tenant, 'read');
        expect(await ask(role, session, action, dataTable, [samplesPartition(tenant, other)], withSessionPolicy)).toBe('Allowed');
        expect(await ask(role, session, action, dataTable, [samplesPartition(other, tenant)], withSessionPolicy)).not.toBe('Allowed');
      }),
      { numRuns: 300 },
    );
  });
});

describe('IAM fence: the evaluator sees the difference (widened copies of the template policy)', () => {
  /** The template's tenant-read policies with every `${aws:PrincipalTag/tenant}` pattern widened to every tenant. */
  const widened = (): TemplateRole['policies'] =>
    JSON.parse(
      JSON.stringify(roles.TenantReadRole!.policies).replaceAll('T#${aws:PrincipalTag/tenant}#*', 'T#*'),
    ) as TemplateRole['policies'];

  it("lets a session read another tenant's keys once the role's own policy allows every tenant, unless the session policy came along", async () => {
    expect(JSON.stringify(widened())).toContain('"dynamodb:LeadingKeys":["T#*"]');

    const withoutSessionPolicy = await foreignReadsAllowed('acme', false, widened());
    expect(withoutSessionPolicy).toContain(`dynamodb:Query ${JSON.stringify([agentsPartition('acme2')])}`);
    expect(withoutSessionPolicy).toContain(`dynamodb:BatchGetItem ${JSON.stringify([agentsPartition('acme'), agentsPartition('ab')])}`);
    expect(await foreignReadsAllowed('a*', false, widened())).toContain(`dynamodb:GetItem ${JSON.stringify([agentsPartition('ab')])}`);
    // Defence in depth: the session policy alone still fences the session.
    expect(await foreignReadsAllowed('acme', true, widened())).toEqual([]);
  });

  it('lets a read without a partition key through once the Null guard is taken out', async () => {
    const role = roles.TenantReadRole!;
    const unguarded = JSON.parse(JSON.stringify(role.policies), (key, value: unknown) =>
      key === 'Null' ? undefined : value,
    ) as TemplateRole['policies'];

    expect(await ask(role, sessionOf(role, 'acme', 'read'), 'dynamodb:Query', dataTable, undefined, false, unguarded)).toBe('Allowed');
    expect(await ask(role, sessionOf(role, 'acme', 'read'), 'dynamodb:Query', dataTable, undefined, false)).not.toBe('Allowed');
  });

  it("keeps a read without a partition key out by the session policy's own Null guard, once the role's policy lost both its guard and its fence", async () => {
    const role = roles.TenantReadRole!;
    const open = JSON.parse(JSON.stringify(widened()), (key, value: unknown) =>
      key === 'Null' ? undefined : value,
    ) as TemplateRole['policies'];
    const session = sessionOf(role, 'acme', 'read');
    const unguardedSession = {
      ...session,
      sessionPolicy: JSON.parse(JSON.stringify(session.sessionPolicy), (key, value: unknown) =>
        key === 'Null' ? undefined : value,
      ) as Json,
    };

    expect(await ask(role, session, 'dynamodb:Query', dataTable, undefined, true, open)).not.toBe('Allowed');
    expect(await ask(role, unguardedSession, 'dynamodb:Query', dataTable, undefined, true, open)).toBe('Allowed');
  });

  it("lets an audit session put into another tenant's partition once the role's own policy allows every partition, unless the session policy came along", async () => {
    const role = roles.TenantAuditRole!;
    const fenced = JSON.stringify(role.policies);
    const everyPartition = fenced.replace(
      '"ForAllValues:StringEquals":{"dynamodb:LeadingKeys":["T#${aws:PrincipalTag/tenant}"]}',
      '"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["*"]}',
    );
    expect(everyPartition).not.toBe(fenced);
    const widenedAudit = JSON.parse(everyPartition) as TemplateRole['policies'];
    const session = sessionOf(role, 'acme', 'audit');
    const foreignPuts = async (withSessionPolicy: boolean): Promise<string[]> => {
      const allowed: string[] = [];
      for (const other of ['acme2', 'ab', null]) {
        if (
          (await ask(role, session, 'dynamodb:PutItem', auditTable, [auditPartition(other)], withSessionPolicy, widenedAudit)) === 'Allowed'
        )
          allowed.push(auditPartition(other));
      }
      return allowed;
    };

    expect(await foreignPuts(false)).toEqual([auditPartition('acme2'), auditPartition('ab'), auditPartition(null)]);
    // Defence in depth: the session policy alone still fences the session to its tenant's partition.
    expect(await foreignPuts(true)).toEqual([]);
    expect(await ask(role, session, 'dynamodb:PutItem', auditTable, [auditPartition('acme')], true, widenedAudit)).toBe('Allowed');
  });
});

describe('IAM fence: audit items', () => {
  describe.each(sessionPolicyCases)('tenant-audit sessions %s', (_, withSessionPolicy) => {
    it.each(TENANTS)("puts tenant %j's audit items into its own partition and nowhere else", async (tenant) => {
      const role = roles.TenantAuditRole!;
      const session = sessionOf(role, tenant, 'audit');
      const wrong: string[] = [];

      if ((await ask(role, session, 'dynamodb:PutItem', auditTable, [auditPartition(tenant)], withSessionPolicy)) !== 'Allowed')
        wrong.push('own partition refused');
      for (const other of [...TENANTS.filter((t) => t !== tenant), null]) {
        if ((await ask(role, session, 'dynamodb:PutItem', auditTable, [auditPartition(other)], withSessionPolicy)) === 'Allowed')
          wrong.push(`put into ${auditPartition(other)}`);
      }
      if ((await ask(role, session, 'dynamodb:PutItem', auditTable, undefined, withSessionPolicy)) === 'Allowed')
        wrong.push('put with no partition key');
      if ((await ask(role, session, 'dynamodb:PutItem', dataTable, [agentsPartition(tenant)], withSessionPolicy)) === 'Allowed')
        wrong.push('put into the data table');

      expect(wrong).toEqual([]);
    });
  });

  it('lets the observations role itself put only the items of tokens that named no tenant', async () => {
    const role = roles.ObservationsRole!;
    const own = { principal: sessionArn(role, 'observations'), tag: {}, sessionPolicy: {} };

    expect(await ask(role, own, 'dynamodb:PutItem', auditTable, [auditPartition(null)], false)).toBe('Allowed');
    expect(await ask(role, own, 'dynamodb:PutItem', auditTable, undefined, false)).not.toBe('Allowed');
    for (const tenant of TENANTS)
      expect(await ask(role, own, 'dynamodb:PutItem', auditTable, [auditPartition(tenant)], false)).not.toBe('Allowed');
  });

  it('lets no other role put audit items at all', async () => {
    for (const role of Object.values(roles)) {
      if (role.id === 'TenantAuditRole' || role.id === 'ObservationsRole') continue;
      const session = { principal: sessionArn(role), tag: { 'aws:PrincipalTag/tenant': 'acme' }, sessionPolicy: {} };
      for (const keys of [[auditPartition('acme')], [auditPartition(null)]]) {
        expect(await ask(role, session, 'dynamodb:PutItem', auditTable, keys, false), `${role.id} ${keys[0]}`).not.toBe('Allowed');
      }
    }
  });

  it('lets no role update, delete or batch-write an audit item, not even in its own tenant', async () => {
    for (const role of Object.values(roles)) {
      const session = { principal: sessionArn(role), tag: { 'aws:PrincipalTag/tenant': 'acme' }, sessionPolicy: {} };
      for (const action of REWRITES) {
        for (const keys of [[auditPartition('acme')], [auditPartition(null)]]) {
          expect(await ask(role, session, action, auditTable, keys, false), `${role.id} ${action} ${keys[0]}`).not.toBe('Allowed');
        }
      }
    }
  });

  it.each(['TenantReadRole', 'TenantAuditRole', 'InventoryRole', 'ObservationsRole', 'McpRole'])(
    '%s denies rewriting audit items outright, whatever else it may one day be given',
    async (id) => {
      const role = roles[id]!;
      const session = { principal: sessionArn(role), tag: { 'aws:PrincipalTag/tenant': 'acme' }, sessionPolicy: {} };
      const allowEverything = {
        name: 'administrator-access',
        policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] },
      };

      for (const action of REWRITES) {
        expect(await ask(role, session, action, auditTable, [auditPartition('acme')], false, [...role.policies, allowEverything])).toBe(
          'ExplicitlyDenied',
        );
      }
    },
  );
});

describe('IAM fence: every role in the template', () => {
  it('may Scan neither table', async () => {
    for (const role of Object.values(roles)) {
      const session = { principal: sessionArn(role), tag: { 'aws:PrincipalTag/tenant': 'acme' }, sessionPolicy: {} };
      for (const table of [dataTable, auditTable])
        expect(await ask(role, session, 'dynamodb:Scan', table, undefined, false), `${role.id} ${table}`).not.toBe('Allowed');
    }
  });

  it('reads the data table only through the tenant-read role', async () => {
    for (const role of Object.values(roles)) {
      if (role.id === 'TenantReadRole') continue;
      const session = { principal: sessionArn(role), tag: { 'aws:PrincipalTag/tenant': 'acme' }, sessionPolicy: {} };
      for (const action of READS)
        expect(await ask(role, session, action, dataTable, [agentsPartition('acme')], false), `${role.id} ${action}`).not.toBe('Allowed');
    }
  });
});

describe('IAM fence: who may assume the tenant roles (trust policies)', () => {
  async function assume(
    callerId: string,
    targetId: string,
    tags: Record<string, string>,
    callerPolicies?: TemplateRole['policies'],
  ): Promise<Decision[]> {
    const caller = roles[callerId]!;
    const target = roles[targetId]!;
    const context: Record<string, string | string[]> = { 'aws:TagKeys': Object.keys(tags) };
    for (const [key, value] of Object.entries(tags)) context[`aws:RequestTag/${key}`] = value;
    if (Object.keys(tags).length === 0) delete context['aws:TagKeys'];
    const decisions: Decision[] = [];
    for (const action of ['sts:AssumeRole', 'sts:TagSession']) {
      decisions.push(
        await decide({
          principal: sessionArn(caller, `${callerId}-function`),
          action,
          resource: target.arn,
          context,
          identityPolicies: callerPolicies ?? caller.policies,
          resourcePolicy: target.trustPolicy,
        }),
      );
    }
    return decisions;
  }
  const tagOf = (tenant: string): Record<string, string> =>
    Object.fromEntries(tenantSessionRequest(tenant, 'read').Tags.map((t) => [t.Key, t.Value]));

  it.each(['InventoryRole', 'ObservationsRole', 'McpRole'])(
    'lets %s assume the tenant-read role with the tenant tag the code sends, for every tenant',
    async (caller) => {
      for (const tenant of TENANTS) expect(await assume(caller, 'TenantReadRole', tagOf(tenant)), tenant).toEqual(['Allowed', 'Allowed']);
    },
  );

  it('lets only the observations role assume the tenant-audit role', async () => {
    expect(await assume('ObservationsRole', 'TenantAuditRole', tagOf('acme'))).toEqual(['Allowed', 'Allowed']);
    for (const caller of Object.keys(roles).filter((id) => id !== 'ObservationsRole')) {
      for (const d of await assume(caller, 'TenantAuditRole', tagOf('acme'))) expect(d, caller).not.toBe('Allowed');
    }
  });

  it.each(['TenantReadRole', 'TenantAuditRole'])(
    'refuses %s without a tenant tag, with an empty one, or with another tag besides',
    async (target) => {
      for (const tags of [{}, { tenant: '' }, { tenant: 'acme', project: 'x' }] as Array<Record<string, string>>) {
        for (const d of await assume('ObservationsRole', target, tags)) expect(d, JSON.stringify(tags)).not.toBe('Allowed');
      }
    },
  );

  it('refuses the tenant-read role to a role the trust policy does not name, whatever its own policy allows', async () => {
    const anything = [
      { name: 'sts-anything', policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'sts:*', Resource: '*' }] } },
    ];
    for (const caller of Object.keys(roles).filter((id) => !['InventoryRole', 'ObservationsRole', 'McpRole'].includes(id))) {
      for (const d of await assume(caller, 'TenantReadRole', tagOf('acme'), anything)) expect(d, caller).not.toBe('Allowed');
    }
  });
});
