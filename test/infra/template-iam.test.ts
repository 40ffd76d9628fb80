import { describe, expect, it } from 'vitest';
import { agentsPartition, auditPartition } from '../../lib/data-format/keys.js';
import { tenantSessionRequest } from '../../lib/store/tenant-fence.js';
import { ACCOUNT, type Decision, decide, REGION, resolveIntrinsics, sessionArn, type TemplateRole, templateRoles } from '../helpers/iam.js';
import type { Json } from '../helpers/package.js';
import { asList, ofType, type Statement, statementsOf, template } from '../helpers/template.js';

/**
 * What each role of the packaged template may do, judged by an independent IAM evaluator
 * (`@cloud-copilot/iam-simulate`, test/helpers/iam.ts) rather than read back as the strings
 * serverless.yml wrote: every function may do what its code needs, with the ARNs its own
 * environment names (its tenant roles, its secret) and AWS's names for its log group, and nothing
 * a set of probes asks beyond that. The tenant fence itself (what a tenant role's session may
 * read and put) is judged in test/infra/tenant-fence-iam.test.ts.
 */

const resources = template.Resources as Json;
const roles: Record<string, TemplateRole> = templateRoles(template);
const arnOf = (id: string): string => resolveIntrinsics({ 'Fn::GetAtt': [id, 'Arn'] }, resources) as string;
const dataTable = arnOf('DataTable');
const auditTable = arnOf('AuditTable');

/** What a function's code needs from AWS beyond its logs and traces (DESIGN §8, lib/store/tenant-client.ts, lib/mcp/broker-secret.ts). */
const NEEDS: Readonly<Record<string, { readsTenantData: boolean; auditsReads: boolean; readsBrokerSecret: boolean }>> = {
  inventory: { readsTenantData: true, auditsReads: false, readsBrokerSecret: false },
  observations: { readsTenantData: true, auditsReads: true, readsBrokerSecret: false },
  // list_endpoints reads the store itself; the observations tool goes through the private API, which audits.
  mcp: { readsTenantData: true, auditsReads: false, readsBrokerSecret: true },
  authorizer: { readsTenantData: false, auditsReads: false, readsBrokerSecret: false },
};

interface DeployedFunction {
  name: string;
  role: TemplateRole;
  /** Its environment as Lambda gives it, intrinsics resolved. */
  env: Record<string, string>;
  inVpc: boolean;
  /** A log stream of the log group Lambda writes the function's logs to (`/aws/lambda/<FunctionName>`). */
  logStream: string;
}

const functions: DeployedFunction[] = ofType('AWS::Lambda::Function').map(([id, f]) => {
  const p = f.Properties;
  const functionName = resolveIntrinsics(p.FunctionName, resources) as string;
  return {
    name: id.replace(/LambdaFunction$/, '').toLowerCase(),
    role: roles[(p.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]] as TemplateRole,
    env: resolveIntrinsics(p.Environment?.Variables ?? {}, resources) as Record<string, string>,
    inVpc: p.VpcConfig !== undefined,
    logStream: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/lambda/${functionName}:log-stream:2026/11/27/[$LATEST]abc`,
  };
});
const functionRoles = new Set(functions.map((fn) => fn.role.id));
/** The tenant roles, as the functions that use them are told their ARNs. */
const tenantReadRole = arnOf('TenantReadRole');
const tenantAuditRole = arnOf('TenantAuditRole');

/** A request made with a function's credentials (its role's session). */
function asFunction(
  fn: DeployedFunction,
  action: string,
  resource: string,
  context: Record<string, string | string[]> = {},
): Promise<Decision> {
  return decide({ principal: sessionArn(fn.role, fn.name), action, resource, context, identityPolicies: fn.role.policies });
}

/** Assuming a role named by ARN with the tenant tag the code sends: the caller's own policy and the role's trust policy. */
async function assumeFor(fn: DeployedFunction, roleArn: string, fence: 'read' | 'audit'): Promise<Decision[]> {
  const target = Object.values(roles).find((role) => role.arn === roleArn);
  if (!target) return ['ImplicitlyDenied'];
  const tags = Object.fromEntries(tenantSessionRequest('acme', fence).Tags.map((t) => [`aws:RequestTag/${t.Key}`, t.Value]));
  const decisions: Decision[] = [];
  for (const action of ['sts:AssumeRole', 'sts:TagSession']) {
    decisions.push(
      await decide({
        principal: sessionArn(fn.role, fn.name),
        action,
        resource: roleArn,
        context: { ...tags, 'aws:TagKeys': ['tenant'] },
        identityPolicies: fn.role.policies,
        resourcePolicy: target.trustPolicy,
      }),
    );
  }
  return decisions;
}

/** Requests no function's code makes: each must be refused to every function. */
const PROBES: ReadonlyArray<[action: string, resource: string]> = [
  ['dynamodb:Scan', dataTable],
  ['dynamodb:Scan', auditTable],
  ['dynamodb:DeleteTable', dataTable],
  ['dynamodb:DescribeTable', auditTable],
  ['dynamodb:UpdateTable', dataTable],
  ['secretsmanager:GetSecretValue', `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:another-secret-AbCdEf`],
  ['secretsmanager:PutSecretValue', `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:mcp-broker-client-secret-AbCdEf`],
  ['iam:PassRole', `arn:aws:iam::${ACCOUNT}:role/anything`],
  ['iam:CreateRole', `arn:aws:iam::${ACCOUNT}:role/anything`],
  ['sts:AssumeRole', `arn:aws:iam::${ACCOUNT}:role/anything`],
  ['lambda:InvokeFunction', `arn:aws:lambda:${REGION}:${ACCOUNT}:function:anything`],
  ['s3:GetObject', 'arn:aws:s3:::any-bucket/any-key'],
  ['kms:Decrypt', `arn:aws:kms:${REGION}:${ACCOUNT}:key/0123abcd-0000-0000-0000-000000000000`],
  ['logs:PutLogEvents', `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/lambda/another-function:log-stream:s`],
  ['logs:DeleteLogGroup', `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/lambda/another-function`],
];

describe('Template: IAM (each role judged by iam-simulate)', () => {
  it('gives each function a role of its own, which only Lambda may assume, and holds no role beyond those and the tenant roles they are told to assume', async () => {
    expect(functionRoles.size).toBe(functions.length);
    expect(functions.map((fn) => fn.name).sort()).toEqual(Object.keys(NEEDS).sort());
    const tenantRoleArns = new Set(functions.flatMap((fn) => [fn.env.TENANT_READ_ROLE_ARN, fn.env.TENANT_AUDIT_ROLE_ARN]));
    for (const role of Object.values(roles)) expect(functionRoles.has(role.id) || tenantRoleArns.has(role.arn), role.id).toBe(true);
    for (const fn of functions) {
      const assumedBy = async (principal: string): Promise<Decision> =>
        decide({ principal, action: 'sts:AssumeRole', resource: fn.role.arn, identityPolicies: [], resourcePolicy: fn.role.trustPolicy });
      expect(await assumedBy('lambda.amazonaws.com'), fn.name).toBe('Allowed');
      expect(await assumedBy('ec2.amazonaws.com'), fn.name).not.toBe('Allowed');
      expect(await assumedBy(`arn:aws:iam::${ACCOUNT}:root`), fn.name).not.toBe('Allowed');
    }
  });

  it('holds every permission in the roles the evaluator reads: inline policies only, no managed policy, no policy resource of its own', () => {
    for (const [id, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
    for (const type of ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy', 'AWS::IAM::User', 'AWS::IAM::Group'])
      expect(ofType(type), type).toEqual([]);
  });

  it('lets every function write its own logs and traces', async () => {
    for (const fn of functions) {
      for (const action of ['logs:CreateLogStream', 'logs:PutLogEvents'])
        expect(await asFunction(fn, action, fn.logStream), fn.name).toBe('Allowed');
      for (const action of ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'])
        expect(await asFunction(fn, action, '*'), fn.name).toBe('Allowed');
    }
  });

  it("refuses every function another function's log group", async () => {
    for (const fn of functions) {
      for (const other of functions.filter((o) => o !== fn))
        expect(await asFunction(fn, 'logs:PutLogEvents', other.logStream), `${fn.name} -> ${other.name}`).not.toBe('Allowed');
    }
  });

  it('lets a function read tenant data only by assuming the tenant-read role its environment names, which the functions that read may, and no other', async () => {
    for (const fn of functions) {
      // Fenced, and told the role, exactly when it reads tenant data; a function that does not is told neither.
      expect([fn.env.TENANT_FENCING, fn.env.TENANT_READ_ROLE_ARN], fn.name).toEqual(
        NEEDS[fn.name]!.readsTenantData ? ['iam', tenantReadRole] : [undefined, undefined],
      );
      const decisions = await assumeFor(fn, tenantReadRole, 'read');
      expect(decisions, fn.name).toEqual(
        NEEDS[fn.name]!.readsTenantData ? ['Allowed', 'Allowed'] : ['ImplicitlyDenied', 'ImplicitlyDenied'],
      );
      // Its own role reads nothing, even with a tenant's keys: the fence is the tenant-read role's.
      for (const action of ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem']) {
        expect(
          await asFunction(fn, action, dataTable, { 'dynamodb:LeadingKeys': [agentsPartition('acme')] }),
          `${fn.name} ${action}`,
        ).not.toBe('Allowed');
      }
    }
  });

  it('lets only the function that audits reads assume the tenant-audit role its environment names, and put with its own role only the items of tokens that named no tenant', async () => {
    for (const fn of functions) {
      const audits = NEEDS[fn.name]!.auditsReads;
      expect(fn.env.TENANT_AUDIT_ROLE_ARN, fn.name).toBe(audits ? tenantAuditRole : undefined);
      expect(await assumeFor(fn, tenantAuditRole, 'audit'), fn.name).toEqual(
        audits ? ['Allowed', 'Allowed'] : ['ImplicitlyDenied', 'ImplicitlyDenied'],
      );
      const ownPut = await asFunction(fn, 'dynamodb:PutItem', auditTable, { 'dynamodb:LeadingKeys': [auditPartition(null)] });
      expect(ownPut, fn.name).toBe(audits ? 'Allowed' : 'ImplicitlyDenied');
      expect(await asFunction(fn, 'dynamodb:PutItem', auditTable, { 'dynamodb:LeadingKeys': [auditPartition('acme')] }), fn.name).not.toBe(
        'Allowed',
      );
      for (const action of ['dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
        const rewrite = await asFunction(fn, action, auditTable, { 'dynamodb:LeadingKeys': [auditPartition(null)] });
        expect(rewrite, `${fn.name} ${action}`).not.toBe('Allowed');
      }
    }
  });

  it('has every role that may touch a table deny itself any rewrite of the audit trail, whatever else would allow it (its own fence beside the table policy)', async () => {
    const anything = {
      name: 'added-later',
      policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'dynamodb:*', Resource: '*' }] },
    };
    const rewrites = [
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:PartiQLUpdate',
      'dynamodb:PartiQLDelete',
    ];
    const touchers = ['InventoryRole', 'ObservationsRole', 'McpRole', 'TenantReadRole', 'TenantAuditRole'];
    const allowed: string[] = [];
    for (const id of touchers) {
      const role = roles[id]!;
      const ask = (action: string, context: Record<string, string[]>) =>
        decide({ principal: sessionArn(role), action, resource: auditTable, context, identityPolicies: [...role.policies, anything] });
      for (const action of rewrites)
        if ((await ask(action, { 'dynamodb:LeadingKeys': [auditPartition('acme')] })) !== 'ExplicitlyDenied')
          allowed.push(`${id} ${action}`);
      if ((await ask('dynamodb:UpdateTimeToLive', {})) !== 'ExplicitlyDenied') allowed.push(`${id} dynamodb:UpdateTimeToLive`);
    }
    expect(allowed).toEqual([]);
  });

  it('lets only the MCP function read the broker client secret its environment names, and no other secret', async () => {
    const secret = functions.find((fn) => fn.env.BROKER_CLIENT_SECRET_ARN)?.env.BROKER_CLIENT_SECRET_ARN as string;
    expect(secret).toMatch(/^arn:aws:secretsmanager:/);
    for (const fn of functions) {
      expect(await asFunction(fn, 'secretsmanager:GetSecretValue', secret), fn.name).toBe(
        NEEDS[fn.name]!.readsBrokerSecret ? 'Allowed' : 'ImplicitlyDenied',
      );
    }
  });

  it('lets a function manage network interfaces only when it runs in the VPC', async () => {
    for (const fn of functions) {
      const networkInterface = `arn:aws:ec2:${REGION}:${ACCOUNT}:network-interface/eni-0123456789abcdef0`;
      for (const action of ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface']) {
        expect(await asFunction(fn, action, networkInterface), `${fn.name} ${action}`).toBe(fn.inVpc ? 'Allowed' : 'ImplicitlyDenied');
      }
    }
  });

  it('refuses every function what no function needs: scans, table changes, other secrets, roles, functions, buckets, keys', async () => {
    const allowed: string[] = [];
    for (const fn of functions) {
      for (const [action, resource] of PROBES)
        if ((await asFunction(fn, action, resource)) === 'Allowed') allowed.push(`${fn.name} ${action} ${resource}`);
    }
    expect(allowed).toEqual([]);
  });

  it('has no wildcard action, and "*" resources only for actions AWS grants on nothing narrower', () => {
    // AWS's own list: these actions take no resource narrower than "*" (service authorization reference).
    const wildcardOnly = new Set([
      'xray:PutTraceSegments',
      'xray:PutTelemetryRecords',
      'ec2:CreateNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSubnets',
      'ec2:DeleteNetworkInterface',
      'ec2:AssignPrivateIpAddresses',
      'ec2:UnassignPrivateIpAddresses',
    ]);
    const statements: Statement[] = Object.keys(roles).flatMap((id) => statementsOf(id));
    for (const statement of statements) {
      for (const action of asList(statement.Action)) expect(action).not.toContain('*');
      if (statement.Effect === 'Allow' && JSON.stringify(statement.Resource).includes('*')) {
        expect(statement.Resource).toBe('*');
        for (const action of asList(statement.Action)) expect(wildcardOnly.has(action), action).toBe(true);
      }
    }
  });
});
