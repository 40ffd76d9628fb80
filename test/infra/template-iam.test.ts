import { describe, expect, it } from 'vitest';
import { asList, EXAMPLE, getAtt, ofType, resource, type Statement, statementsOf, template } from '../helpers/template.js';

/** The roles and policies of the packaged template: one role per function, the tenant fence, least privilege. */

describe('Template: IAM', () => {
  const WILDCARD_ONLY_ACTIONS = new Set([
    'xray:PutTraceSegments',
    'xray:PutTelemetryRecords',
    'ec2:CreateNetworkInterface',
    'ec2:DescribeNetworkInterfaces',
    'ec2:DescribeSubnets',
    'ec2:DeleteNetworkInterface',
    'ec2:AssignPrivateIpAddresses',
    'ec2:UnassignPrivateIpAddresses',
  ]);

  const TENANT_READ_ROLE_ARN = {
    'Fn::Sub': 'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/endpoint-read-service-example-tenant-read',
  };
  const TENANT_AUDIT_ROLE_ARN = {
    'Fn::Sub': 'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/endpoint-read-service-example-tenant-audit',
  };
  const assumeTenantRead = {
    Sid: 'AssumeTenantReadRole',
    Effect: 'Allow',
    Action: ['sts:AssumeRole', 'sts:TagSession'],
    Resource: TENANT_READ_ROLE_ARN,
  };
  const assumeTenantAudit = {
    Sid: 'AssumeTenantAuditRole',
    Effect: 'Allow',
    Action: ['sts:AssumeRole', 'sts:TagSession'],
    Resource: TENANT_AUDIT_ROLE_ARN,
  };
  const neverRewriteAudit = {
    Sid: 'NeverRewriteAuditItems',
    Effect: 'Deny',
    Action: ['dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
    Resource: getAtt('AuditTable'),
  };
  /** A tenant role's trust: only these callers, only with one non-empty `tenant` tag and no other. */
  const tenantTrust = (sid: string, callers: string[]) => [
    {
      Sid: sid,
      Effect: 'Allow',
      Principal: { AWS: callers.map((id) => getAtt(id)) },
      Action: ['sts:AssumeRole', 'sts:TagSession'],
      Condition: {
        Null: { 'aws:RequestTag/tenant': 'false' },
        StringLike: { 'aws:RequestTag/tenant': '?*' },
        'ForAllValues:StringEquals': { 'aws:TagKeys': ['tenant'] },
      },
    },
  ];
  const dynamoOf = (role: string): Statement[] => statementsOf(role).filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));
  const stsOf = (role: string): Statement[] => statementsOf(role).filter((s) => asList(s.Action).some((a) => a.startsWith('sts:')));

  it('gives each function its own role, plus the tenant-read and tenant-audit roles, and creates no other', () => {
    expect(
      ofType('AWS::IAM::Role')
        .map(([id]) => id)
        .sort(),
    ).toEqual(['AuthorizerRole', 'InventoryRole', 'McpRole', 'ObservationsRole', 'TenantAuditRole', 'TenantReadRole']);
    expect(resource('AuthorizerLambdaFunction').Properties.Role).toEqual(getAtt('AuthorizerRole'));
    expect(resource('InventoryLambdaFunction').Properties.Role).toEqual(getAtt('InventoryRole'));
    expect(resource('ObservationsLambdaFunction').Properties.Role).toEqual(getAtt('ObservationsRole'));
    expect(resource('McpLambdaFunction').Properties.Role).toEqual(getAtt('McpRole'));
    for (const id of ['InventoryRole', 'ObservationsRole', 'McpRole', 'AuthorizerRole']) {
      expect(resource(id).Properties.ManagedPolicyArns).toBeUndefined();
      expect(resource(id).Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
      ]);
    }
  });

  it('fences data-table reads by IAM: no function reads it with its own role; each assumes the tenant-read role, observations the tenant-audit role too', () => {
    for (const role of ['InventoryRole', 'ObservationsRole', 'McpRole']) {
      expect(dynamoOf(role).filter((s) => JSON.stringify(s.Resource).includes('DataTable'))).toEqual([]);
    }
    expect(stsOf('InventoryRole')).toEqual([assumeTenantRead]);
    expect(stsOf('McpRole')).toEqual([assumeTenantRead]);
    expect(stsOf('ObservationsRole')).toEqual([assumeTenantRead, assumeTenantAudit]);
    for (const id of ['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction']) {
      expect(resource(id).Properties.Environment.Variables).toMatchObject({
        TENANT_FENCING: 'iam',
        TENANT_READ_ROLE_ARN: TENANT_READ_ROLE_ARN,
        TENANT_AUDIT_ROLE_ARN: TENANT_AUDIT_ROLE_ARN,
      });
    }
  });

  // What these policies allow and refuse, tenant by tenant, is judged by an IAM evaluator:
  // test/infra/tenant-fence-iam.test.ts. Here: that the template says it in these words.
  it("fences the tenant-read role to the keys of the tenant named by the session's tag, assumed only by the functions with that tag", () => {
    const role = resource('TenantReadRole').Properties;

    expect(role.RoleName).toBe('endpoint-read-service-example-tenant-read');
    expect(role.MaxSessionDuration).toBe(3600);
    expect(role.AssumeRolePolicyDocument.Statement).toEqual(
      tenantTrust('TheFunctionsWithATenantTag', ['InventoryRole', 'ObservationsRole', 'McpRole']),
    );
    expect(statementsOf('TenantReadRole')).toEqual([
      {
        Sid: 'ReadOwnTenantsPartitions',
        Effect: 'Allow',
        Action: ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem'],
        Resource: getAtt('DataTable'),
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#${aws:PrincipalTag/tenant}#*'] },
          Null: { 'dynamodb:LeadingKeys': 'false', 'aws:PrincipalTag/tenant': 'false' },
        },
      },
      neverRewriteAudit,
    ]);
  });

  it("fences the tenant-audit role to PutItem into the audit partition of the tenant named by the session's tag, assumed only by observations", () => {
    const role = resource('TenantAuditRole').Properties;

    expect(role.RoleName).toBe('endpoint-read-service-example-tenant-audit');
    expect(role.MaxSessionDuration).toBe(3600);
    expect(role.AssumeRolePolicyDocument.Statement).toEqual(tenantTrust('ObservationsWithATenantTag', ['ObservationsRole']));
    expect(statementsOf('TenantAuditRole')).toEqual([
      {
        Sid: 'PutOwnTenantsAuditItems',
        Effect: 'Allow',
        Action: ['dynamodb:PutItem'],
        Resource: getAtt('AuditTable'),
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['T#${aws:PrincipalTag/tenant}'] },
          Null: { 'dynamodb:LeadingKeys': 'false', 'aws:PrincipalTag/tenant': 'false' },
        },
      },
      neverRewriteAudit,
    ]);
  });

  it('lets observations itself put only the audit items of tokens with no tenant, and no function role rewrite one', () => {
    expect(dynamoOf('ObservationsRole')).toEqual([
      {
        Sid: 'PutNoTenantAuditItems',
        Effect: 'Allow',
        Action: ['dynamodb:PutItem'],
        Resource: getAtt('AuditTable'),
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['NO_TENANT'] }, Null: { 'dynamodb:LeadingKeys': 'false' } },
      },
      neverRewriteAudit,
    ]);
    expect(dynamoOf('InventoryRole')).toEqual([neverRewriteAudit]);
  });

  it('lets mcp read its one secret, and nothing on the audit table', () => {
    const statements = statementsOf('McpRole');
    const secrets = statements.filter((s) => asList(s.Action).some((a) => a.startsWith('secretsmanager:')));

    expect(dynamoOf('McpRole')).toEqual([neverRewriteAudit]);
    expect(secrets).toEqual([
      { Sid: 'ReadBrokerClientSecret', Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: EXAMPLE.brokerSecretArn },
    ]);
    expect(JSON.stringify(statements.filter((s) => s.Effect === 'Allow'))).not.toContain('AuditTable');
  });

  it('lets the token authorizer write its logs and traces, and nothing else: no table, no secret, no role to assume', () => {
    expect(statementsOf('AuthorizerRole')).toEqual([
      {
        Sid: 'WriteOwnLogs',
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: getAtt('AuthorizerLogGroup'),
      },
      { Sid: 'UploadTraces', Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' },
    ]);
  });

  it('lets each function write only its own log group', () => {
    for (const [role, logGroup] of [
      ['InventoryRole', 'InventoryLogGroup'],
      ['ObservationsRole', 'ObservationsLogGroup'],
      ['McpRole', 'McpLogGroup'],
      ['AuthorizerRole', 'AuthorizerLogGroup'],
    ] as const) {
      const logs = statementsOf(role).filter((s) => asList(s.Action).some((a) => a.startsWith('logs:')));
      expect(logs).toEqual([
        { Sid: 'WriteOwnLogs', Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: getAtt(logGroup) },
      ]);
    }
  });

  it('has no wildcard action, and "*" resources only for actions AWS grants on nothing narrower', () => {
    const all = ofType('AWS::IAM::Role').flatMap(([id]) => statementsOf(id));

    for (const statement of all) {
      // The one Deny: rewriting audit items, refused outright.
      if (statement.Effect === 'Deny') {
        expect(statement).toEqual(neverRewriteAudit);
        continue;
      }
      expect(statement.Effect).toBe('Allow');
      for (const action of asList(statement.Action)) expect(action).not.toContain('*');
      if (JSON.stringify(statement.Resource).includes('*')) {
        expect(statement.Resource).toBe('*');
        for (const action of asList(statement.Action)) expect(WILDCARD_ONLY_ACTIONS.has(action)).toBe(true);
      }
    }
    // Network interfaces only for the function in the VPC.
    expect(JSON.stringify(statementsOf('InventoryRole'))).not.toContain('ec2:');
  });

  it('never mentions Scan', () => {
    expect(JSON.stringify(template)).not.toMatch(/Scan/);
  });
});
