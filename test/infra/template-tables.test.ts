import { describe, expect, it } from 'vitest';
import { connectionRecordItem, durableRecordItem, policyItem, sampleItem } from '../../lib/data-format/items.js';
import { auditPartition, sampleSortKey } from '../../lib/data-format/keys.js';
import { type AuditItem, auditRecord } from '../../lib/store/audit.js';
import { ACCOUNT, type Decision, decide, resolveIntrinsics, templateRoles } from '../helpers/iam.js';
import type { Json } from '../helpers/package.js';
import { ofType, resource, state, template } from '../helpers/template.js';

/**
 * The two DynamoDB tables of the packaged template, judged by what the code puts into them: the
 * items producers write (lib/data-format/items.ts) and the audit items the observations function writes
 * (lib/store/audit.ts) must fit each table's keys, be told apart by them, sort as the reads need
 * and expire only where they should; and the functions must be given these very tables.
 */

const resources = template.Resources as Json;
const RETENTION_DAYS = 8;
const at = (iso: string): Date => new Date(iso);

/** An item of each kind the data table holds, for two tenants and two agents, as producers write them. */
function dataItems(): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  for (const tenant of ['acme', 'acme#2']) {
    for (const agent of ['a-1', 'a#1']) {
      const hello = { agent_id: agent, hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' };
      items.push(durableRecordItem(tenant, hello));
      items.push(connectionRecordItem(tenant, { ...hello, state: 'connected', connected_at: '2026-11-27T10:00:00.000Z' }));
      for (const observed of ['2026-11-27T10:00:00.000Z', '2026-11-27T10:01:00.000Z']) {
        items.push(sampleItem(tenant, agent, { observed_at: observed, cpu: 1, memory: null, disk: 2 }, RETENTION_DAYS));
      }
    }
    items.push(policyItem(tenant, { ticket: 'required', scope: 'optional', thresholds: {} }));
  }
  return items;
}

function auditItems(): Array<Record<string, unknown>> {
  const item = (tenant: string | null, id: string, time: string): AuditItem => ({
    audit_id: id,
    request_id: id,
    api_request_id: null,
    at: time,
    tenant_id: tenant,
    subject: 'alice',
    broker: 'mcp-broker',
    agent_id: 'a-1',
    scope: null,
    reason: 'disk alert',
    ticket_number: null,
    ticket_system: null,
    reason_source: 'argument',
    ticket_source: null,
    minutes: 60,
    limit: 100,
    outcome: 'allowed',
    status_code: 200,
  });
  return [
    item('acme', 'r-1', '2026-11-27T10:00:00.000Z'),
    item('acme', 'r-2', '2026-11-27T10:00:00.000Z'),
    item('globex', 'r-1', '2026-11-27T10:00:00.000Z'),
    item(null, 'r-3', '2026-11-27T10:00:01.000Z'),
  ].map(auditRecord);
}

const TABLES = { DataTable: dataItems, AuditTable: auditItems } as const;

/** The JavaScript type DynamoDB's scalar attribute type takes in a document (S, N, B). */
const JS_TYPE: Readonly<Record<string, string>> = { S: 'string', N: 'number', B: 'object' };

const keysOf = (id: string): Array<{ name: string; type: string; role: string }> => {
  const p = resource(id).Properties;
  return (p.KeySchema as Json[]).map((k) => ({
    name: k.AttributeName as string,
    role: k.KeyType as string,
    type: (p.AttributeDefinitions as Json[]).find((d) => d.AttributeName === k.AttributeName)?.AttributeType as string,
  }));
};

describe('Template: tables (judged by the items the code writes)', () => {
  it('are the tables the functions are given, and no other: the data table to those that read it, the audit table to the one that audits', () => {
    const [data, audit] = Object.keys(TABLES).map((id) => resolveIntrinsics({ Ref: id }, resources));
    expect(
      ofType('AWS::DynamoDB::Table')
        .map(([id]) => id)
        .sort(),
    ).toEqual(Object.keys(TABLES).sort());
    const tables = Object.fromEntries(
      ofType('AWS::Lambda::Function').map(([id, f]) => {
        const env = resolveIntrinsics(f.Properties.Environment.Variables, resources) as Record<string, string>;
        return [id, [env.DATA_TABLE, env.AUDIT_TABLE]];
      }),
    );
    expect(tables).toEqual({
      InventoryLambdaFunction: [data, undefined],
      ObservationsLambdaFunction: [data, audit],
      McpLambdaFunction: [data, undefined],
      AuthorizerLambdaFunction: [undefined, undefined],
    });
  });

  it.each(Object.entries(TABLES))('%s: every item the code writes carries its keys, of the declared types', (id, items) => {
    const keys = keysOf(id);
    expect(keys.map((k) => k.role).sort()).toEqual(['HASH', 'RANGE']);
    for (const item of items()) {
      for (const key of keys) expect(typeof item[key.name], `${key.name} of ${JSON.stringify(item)}`).toBe(JS_TYPE[key.type]);
    }
  });

  it.each(Object.entries(TABLES))('%s: its keys tell apart every item the code writes (no put overwrites another record)', (id, items) => {
    const [hash, range] = ['HASH', 'RANGE'].map((role) => keysOf(id).find((k) => k.role === role)!.name);
    const written = items();
    const distinct = new Set(written.map((item) => JSON.stringify([item[hash!], item[range!]])));
    expect(distinct.size).toBe(written.length);
  });

  it("DataTable: sorts an agent's samples by time, so a window is one range of its sort key", () => {
    const range = keysOf('DataTable').find((k) => k.role === 'RANGE')!;
    const times = ['2026-11-27T09:59:59.999Z', '2026-11-27T10:00:00.000Z', '2026-11-27T10:00:00.001Z', '2026-12-01T00:00:00.000Z'];
    const sortKeys = times.map((time) => sampleSortKey(at(time)));

    // An S sort key is ordered by its UTF-8 bytes.
    expect(range.type).toBe('S');
    expect([...sortKeys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))).toEqual(sortKeys);
  });

  it('DataTable: expires samples by the attribute they carry, at their time plus the retention, and nothing else it holds', () => {
    const ttl = resource('DataTable').Properties.TimeToLiveSpecification as Json;
    const items = dataItems();
    const samples = items.filter((item) => item.observed_at !== undefined && item.cpu !== undefined);

    expect(ttl.Enabled).toBe(true);
    for (const sample of samples) {
      expect(sample[ttl.AttributeName]).toBe(Date.parse(sample.observed_at as string) / 1000 + RETENTION_DAYS * 86_400);
    }
    for (const item of items.filter((i) => !samples.includes(i))) expect(item[ttl.AttributeName]).toBeUndefined();
  });

  it('AuditTable: lets no audit item expire (retention is the operator’s decision)', () => {
    expect(resource('AuditTable').Properties.TimeToLiveSpecification).toBeUndefined();
  });

  it.each(Object.keys(TABLES))(
    '%s: outlives the stack and its mistakes: kept on delete and replace, deletion-protected, point-in-time recovery, on demand',
    (id) => {
      const table = resource(id);

      expect([table.DeletionPolicy, table.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
      expect(table.Properties).toMatchObject({
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        BillingMode: 'PAY_PER_REQUEST',
      });
    },
  );

  it.each(Object.keys(TABLES))(
    "%s: is encrypted with DynamoDB's AWS owned key unless the stage names its own (SSEEnabled true without a key would be the billed aws/dynamodb key)",
    (id) => {
      expect(resource(id).Properties.SSESpecification).toEqual({ SSEEnabled: false });
    },
  );
});

describe('Template: the audit table closed by its own resource policy (judged by iam-simulate)', () => {
  const auditTable = resolveIntrinsics({ 'Fn::GetAtt': ['AuditTable', 'Arn'] }, resources) as string;
  const policy = resolveIntrinsics(resource('AuditTable').Properties.ResourcePolicy.PolicyDocument, resources) as Json;
  const roles = templateRoles(template);
  const deploymentRole = state.service.provider.iam.deploymentRole as string;
  const everything = [
    { name: 'administrator', policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'dynamodb:*', Resource: '*' }] } },
  ];

  /** Who asks: an assumed-role session, as AWS names it in `aws:PrincipalArn` (the role) and as the principal (the session). */
  interface Asker {
    role: string;
    identityPolicies: Array<{ name: string; policy: Json }>;
    context?: Record<string, string | string[]>;
  }
  const roleName = (arn: string): string => arn.split('/').pop()!;
  const administrator: Asker = { role: `arn:aws:iam::${ACCOUNT}:role/Administrator`, identityPolicies: everything };
  const deployer: Asker = { role: deploymentRole, identityPolicies: everything };
  /** Everything the table's IAM allows someone with dynamodb:* in the account: the policy alone must refuse them. */
  const ask = (who: Asker, action: string, resourcePolicy: Json = policy): Promise<Decision> =>
    decide({
      principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${roleName(who.role)}/session`,
      action,
      resource: auditTable,
      context: { 'aws:PrincipalArn': who.role, ...who.context },
      identityPolicies: who.identityPolicies,
      resourcePolicy,
    });

  const REWRITES = [
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:PartiQLUpdate',
    'dynamodb:PartiQLDelete',
  ];
  const UNMAKINGS = [
    'dynamodb:UpdateTimeToLive',
    'dynamodb:UpdateTable',
    'dynamodb:DeleteTable',
    'dynamodb:UpdateContinuousBackups',
    'dynamodb:RestoreTableToPointInTime',
    'dynamodb:PutResourcePolicy',
    'dynamodb:DeleteResourcePolicy',
  ];
  const ADDITIONS = ['dynamodb:PutItem', 'dynamodb:PartiQLInsert'];

  it('names the deployment role the stage deploys with as the one principal that may change or rewrite it', () => {
    expect(deploymentRole).toMatch(/^arn:aws:iam::\d{12}:role\//);
    expect(JSON.stringify(policy)).toContain(deploymentRole);
    expect(policy.Statement.every((st: Json) => st.Effect === 'Deny' && st.Principal === '*' && st.Resource === auditTable)).toBe(true);
  });

  it('refuses an account administrator (dynamodb:* on *) every rewrite, deletion, TTL change, restore, policy change and put, but leaves the trail readable', async () => {
    const decisions: Record<string, Decision> = {};
    for (const action of [...REWRITES, ...UNMAKINGS, ...ADDITIONS, 'dynamodb:GetItem', 'dynamodb:Query'])
      decisions[action] = await ask(administrator, action);

    expect(decisions).toEqual({
      ...Object.fromEntries([...REWRITES, ...UNMAKINGS, ...ADDITIONS].map((a) => [a, 'ExplicitlyDenied'])),
      'dynamodb:GetItem': 'Allowed',
      'dynamodb:Query': 'Allowed',
    });
  });

  it('leaves the deployment role, with its own rights, everything', async () => {
    for (const action of [...REWRITES, ...UNMAKINGS, ...ADDITIONS]) expect(await ask(deployer, action), action).toBe('Allowed');
  });

  it("leaves the observations function's puts to its roles: a tenant's items through the tenant-audit role, tokens without a tenant with its own", async () => {
    const tenantAudit: Asker = {
      role: roles.TenantAuditRole!.arn,
      identityPolicies: roles.TenantAuditRole!.policies,
      context: { 'aws:PrincipalTag/tenant': 'acme', 'dynamodb:LeadingKeys': [auditPartition('acme')] },
    };
    const observations: Asker = {
      role: roles.ObservationsRole!.arn,
      identityPolicies: roles.ObservationsRole!.policies,
      context: { 'dynamodb:LeadingKeys': [auditPartition(null)] },
    };

    expect(await ask(tenantAudit, 'dynamodb:PutItem')).toBe('Allowed');
    expect(await ask(observations, 'dynamodb:PutItem')).toBe('Allowed');
    // Neither may change an item, by its own deny and by the table's.
    for (const who of [tenantAudit, observations])
      for (const action of REWRITES) expect(await ask(who, action), action).toBe('ExplicitlyDenied');
    // The same roles without the table's policy still deny themselves the rewrites: two fences, each whole.
    // UpdateTimeToLive names the table, not items: it is asked without leading keys.
    const noTablePolicy = { Version: '2012-10-17', Statement: [] };
    for (const who of [tenantAudit, observations]) {
      for (const action of ['dynamodb:UpdateItem', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLDelete'])
        expect(await ask(who, action, noTablePolicy), action).toBe('ExplicitlyDenied');
      expect(await ask({ ...who, context: {} }, 'dynamodb:UpdateTimeToLive', noTablePolicy)).toBe('ExplicitlyDenied');
    }
  });

  it('holds nothing the evaluator does not need: without any one action, or the exception of any one principal, a decision changes', async () => {
    const without = (sid: string, change: (statement: Json) => void): Json => {
      const copy = JSON.parse(JSON.stringify(policy)) as Json;
      change(copy.Statement.find((st: Json) => st.Sid === sid));
      return copy;
    };
    const unchanged: string[] = [];
    for (const statement of policy.Statement as Json[]) {
      for (const action of statement.Action as string[]) {
        const weaker = without(statement.Sid, (st) => {
          st.Action = (st.Action as string[]).filter((a) => a !== action);
        });
        if ((await ask(administrator, action, weaker)) !== 'Allowed') unchanged.push(`${statement.Sid} without ${action}`);
      }
      const excepted = [statement.Condition.ArnNotEquals['aws:PrincipalArn']].flat() as string[];
      for (const role of excepted) {
        const stricter = without(statement.Sid, (st) => {
          st.Condition.ArnNotEquals['aws:PrincipalArn'] = excepted.filter((r) => r !== role);
        });
        const who = { role, identityPolicies: everything };
        if ((await ask(who, (statement.Action as string[])[0]!, stricter)) !== 'ExplicitlyDenied')
          unchanged.push(`${statement.Sid} without ${role}`);
      }
    }
    expect(unchanged).toEqual([]);
    // The principals the put statement excepts are the observations function's two roles and the deployment role.
    const putExceptions = [
      policy.Statement.find((st: Json) => (st.Action as string[]).includes('dynamodb:PutItem')).Condition.ArnNotEquals['aws:PrincipalArn'],
    ].flat();
    expect(putExceptions.sort()).toEqual([deploymentRole, roles.ObservationsRole!.arn, roles.TenantAuditRole!.arn].sort());
  });
});
