import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { METRIC, METRICS_NAMESPACE } from '../../lib/observability/metrics.js';
import { canCutNetwork, credentialFreeEnv, packageTemplate, removePackage, type Json, type PackagedTemplate } from '../helpers/package.js';
import { readZip } from './zip.js';

/**
 * Runs `npm run package` as a user would (build, then osls package), offline and without AWS
 * credentials, and reads every guarantee of DESIGN §8 and issue 4 off the generated template.
 * The `example` stage's placeholder parameters (serverless.yml) are the values checked below.
 */

const EXAMPLE = {
  issuer: 'https://issuer.example.com/',
  audience: 'endpoint-read-service',
  vpce: 'vpce-0123456789abcdef0',
  subnets: 'subnet-0123456789abcdef0,subnet-0123456789abcdef1',
  securityGroups: 'sg-0123456789abcdef0',
  mcpAudience: 'https://api.example.com/api/mcp',
  tokenEndpoint: 'https://issuer.example.com/oauth2/token',
  brokerClientId: 'mcp-broker',
  brokerSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp-broker-client-secret-AbCdEf',
};

let packaged: PackagedTemplate | undefined;
let template: Json;
let state: Json;

const resources = (): Array<[string, Json]> => Object.entries(template.Resources as Json);
const ofType = (type: string): Array<[string, Json]> => resources().filter(([, r]) => r.Type === type);
const resource = (id: string): Json => {
  const r = (template.Resources as Json)[id];
  if (!r) throw new Error(`no resource ${id} in the template`);
  return r as Json;
};
const asList = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
const getAtt = (id: string, attribute = 'Arn'): Json => ({ 'Fn::GetAtt': [id, attribute] });

interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}
function statementsOf(roleId: string): Statement[] {
  return (resource(roleId).Properties.Policies as Json[]).flatMap((p) => p.PolicyDocument.Statement as Statement[]);
}

beforeAll(async () => {
  packaged = await packageTemplate();
  ({ template, state } = packaged);
}, 300_000);

afterAll(() => {
  removePackage(packaged);
});

describe('Template: npm run package', () => {
  it(`packages with no AWS credentials${canCutNetwork ? ' and no network' : ''}`, () => {
    expect(Object.keys(template.Resources as Json).length).toBeGreaterThan(30);
  });

  describe('Bundles', () => {
    it.each([
      ['inventory', 'InventoryLambdaFunction'],
      ['observations', 'ObservationsLambdaFunction'],
      ['mcp', 'McpLambdaFunction'],
    ])('ships %s as its own esbuild zip on nodejs22.x with source maps enabled', (name, id) => {
      const fn = resource(id).Properties;
      const artifact = state.service.functions[name].package.artifact as string;

      expect(fn.Runtime).toBe('nodejs22.x');
      expect(fn.Handler).toBe('index.handler');
      expect(fn.Environment.Variables.NODE_OPTIONS).toContain('--enable-source-maps');
      expect(fn.Code.S3Key).toMatch(new RegExp(`/${name}\\.zip$`));
      expect(artifact).toBe(`dist/${name}.zip`);
      const entries = readZip(readFileSync(join(ROOT, artifact))).map((e) => e.name);
      expect(entries).toEqual(['index.mjs', 'index.mjs.map']);
    });
  });

  describe('Public HTTP API: inventory and the MCP door', () => {
    const routes = (): Json[] => ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
    const authorizerNamed = (name: string): [string, Json] => ofType('AWS::ApiGatewayV2::Authorizer').find(([, a]) => a.Properties.Name === name)!;

    it('routes GET /api/agents through a JWT authorizer with the stage issuer and the inventory audience', () => {
      const [authorizerId, authorizer] = authorizerNamed('jwtAuthorizer');

      expect(routes().find((r) => r.RouteKey === 'GET /api/agents')).toMatchObject({ AuthorizationType: 'JWT', AuthorizerId: { Ref: authorizerId } });
      expect(authorizer.Properties).toMatchObject({
        AuthorizerType: 'JWT',
        IdentitySource: ['$request.header.Authorization'],
        JwtConfiguration: { Issuer: EXAMPLE.issuer, Audience: [EXAMPLE.audience] },
      });
    });

    it('routes POST, GET and DELETE /api/mcp through their own authorizer, whose audience is the MCP resource', () => {
      const [authorizerId, authorizer] = authorizerNamed('mcpAuthorizer');
      const mcpRoutes = routes().filter((r) => / \/api\/mcp$/.test(r.RouteKey as string));

      expect(mcpRoutes.map((r) => r.RouteKey).sort()).toEqual(['DELETE /api/mcp', 'GET /api/mcp', 'POST /api/mcp']);
      for (const route of mcpRoutes) expect(route).toMatchObject({ AuthorizationType: 'JWT', AuthorizerId: { Ref: authorizerId } });
      expect(authorizer.Properties.JwtConfiguration).toEqual({ Issuer: EXAMPLE.issuer, Audience: [EXAMPLE.mcpAudience] });
      expect(EXAMPLE.mcpAudience).not.toBe(EXAMPLE.audience);
    });

    it('serves the protected resource metadata without any authorizer, and has no other route', () => {
      const open = routes().filter((r) => r.AuthorizationType === undefined || r.AuthorizationType === 'NONE');

      expect(open.map((r) => r.RouteKey).sort()).toEqual([
        'GET /.well-known/oauth-protected-resource',
        'GET /.well-known/oauth-protected-resource/api/mcp',
      ]);
      expect(routes()).toHaveLength(6);
      expect(routes().map((r) => r.RouteKey)).not.toContain('GET /api/mcp/endpoint');
    });

    it('sends payload 2.0 events to the inventory and MCP functions', () => {
      const integrations = ofType('AWS::ApiGatewayV2::Integration').map(([, i]) => i.Properties);

      expect(integrations).toHaveLength(2);
      for (const integration of integrations) expect(integration).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      expect(integrations.map((i) => JSON.stringify(i.IntegrationUri).match(/(Inventory|Mcp)LambdaFunction/)?.[1]).sort()).toEqual(['Inventory', 'Mcp']);
    });

    it('throttles the inventory and MCP routes on the stage, each with its own limits', () => {
      const stage = resource('HttpApiStage');

      expect(stage.Properties.RouteSettings['GET /api/agents']).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
      for (const key of ['POST /api/mcp', 'GET /api/mcp', 'DELETE /api/mcp']) {
        expect(stage.Properties.RouteSettings[key]).toMatchObject({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40, DetailedMetricsEnabled: true });
      }
      expect(stage.Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
      expect(asList(stage.DependsOn)).toEqual(expect.arrayContaining(['HttpApiRouteGetApiAgents', 'HttpApiRoutePostApiMcp', 'HttpApiRouteGetApiMcp', 'HttpApiRouteDeleteApiMcp']));
    });

    it('runs the MCP function in the VPC, calling the private API by its name and reading its client secret by ARN only', () => {
      const fn = resource('McpLambdaFunction').Properties;

      expect(fn.VpcConfig).toEqual({
        SubnetIds: { 'Fn::Split': [',', EXAMPLE.subnets] },
        SecurityGroupIds: { 'Fn::Split': [',', EXAMPLE.securityGroups] },
      });
      expect(fn.Environment.Variables).toMatchObject({
        MCP_AUDIENCE: EXAMPLE.mcpAudience,
        TOKEN_ENDPOINT: EXAMPLE.tokenEndpoint,
        BROKER_CLIENT_ID: EXAMPLE.brokerClientId,
        BROKER_CLIENT_SECRET_ARN: EXAMPLE.brokerSecretArn,
        OBSERVATIONS_AUDIENCE: 'endpoint-observations',
        OBSERVATIONS_URL: { 'Fn::Sub': 'https://${PrivateApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/example/api/mcp/endpoint' },
      });
      // The secret itself is never in the template, under any name.
      expect(JSON.stringify(template)).not.toMatch(/BROKER_CLIENT_SECRET"/);
    });
  });

  describe('Observations: private REST API', () => {
    it('is the only REST API, private, bound to the execute-api VPC endpoint', () => {
      const apis = ofType('AWS::ApiGateway::RestApi');

      expect(apis.map(([id]) => id)).toEqual(['PrivateApi']);
      expect(apis[0]![1].Properties.EndpointConfiguration).toEqual({ Types: ['PRIVATE'], VpcEndpointIds: [EXAMPLE.vpce] });
    });

    it('has a resource policy that admits the one method only through that endpoint, and denies everything else', () => {
      const statements = resource('PrivateApi').Properties.Policy.Statement as Json[];

      expect(statements).toEqual([
        {
          Sid: 'OnlyTheOneMethodThroughTheVpcEndpoint',
          Effect: 'Allow',
          Principal: '*',
          Action: 'execute-api:Invoke',
          Resource: 'execute-api:/example/GET/api/mcp/endpoint',
          Condition: { StringEquals: { 'aws:SourceVpce': EXAMPLE.vpce } },
        },
        {
          Sid: 'NothingFromOutsideTheVpcEndpoint',
          Effect: 'Deny',
          Principal: '*',
          Action: 'execute-api:Invoke',
          Resource: 'execute-api:/*',
          Condition: { StringNotEquals: { 'aws:SourceVpce': EXAMPLE.vpce } },
        },
      ]);
    });

    it('exposes GET /api/mcp/endpoint only, without IAM auth (the bearer token keeps Authorization), as a Lambda proxy to observations', () => {
      const methods = ofType('AWS::ApiGateway::Method');
      const paths = ofType('AWS::ApiGateway::Resource').map(([, r]) => r.Properties.PathPart);
      const method = methods[0]![1].Properties;

      expect(paths).toEqual(['api', 'mcp', 'endpoint']);
      expect(methods).toHaveLength(1);
      expect(method).toMatchObject({
        HttpMethod: 'GET',
        AuthorizationType: 'NONE',
        ResourceId: { Ref: 'PrivateApiResourceEndpoint' },
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
      });
      expect(JSON.stringify(method.Integration.Uri)).toContain('${ObservationsLambdaFunction.Arn}');
    });

    it('publishes a fresh deployment to a traced, throttled stage', () => {
      const stage = resource('PrivateApiStage').Properties;
      const deployment = resource(stage.DeploymentId.Ref as string);

      expect(deployment.Type).toBe('AWS::ApiGateway::Deployment');
      expect(deployment.Properties.RestApiId).toEqual({ Ref: 'PrivateApi' });
      expect(asList(deployment.DependsOn)).toContain('PrivateApiEndpointGet');
      expect(stage.TracingEnabled).toBe(true);
      expect(stage.MethodSettings[0]).toMatchObject({
        ResourcePath: '/~1api~1mcp~1endpoint',
        HttpMethod: 'GET',
        LoggingLevel: 'OFF',
        DataTraceEnabled: false,
        ThrottlingRateLimit: 20,
        ThrottlingBurstLimit: 40,
      });
    });

    it('runs the function in the given private subnets and security groups', () => {
      expect(resource('ObservationsLambdaFunction').Properties.VpcConfig).toEqual({
        SubnetIds: { 'Fn::Split': [',', EXAMPLE.subnets] },
        SecurityGroupIds: { 'Fn::Split': [',', EXAMPLE.securityGroups] },
      });
      expect(resource('InventoryLambdaFunction').Properties.VpcConfig).toBeUndefined();
    });

    it('lets only the private API invoke it: no public route, no function URL', () => {
      const permissions = ofType('AWS::Lambda::Permission').map(([, p]) => p.Properties);
      const forObservations = permissions.filter((p) => JSON.stringify(p.FunctionName).includes('Observations'));

      expect(ofType('AWS::Lambda::Url')).toEqual([]);
      expect(forObservations).toHaveLength(1);
      expect(forObservations[0]).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
      expect(forObservations[0]!.SourceArn['Fn::Sub']).toMatch(/:\$\{PrivateApi\}\/example\/GET\/api\/mcp\/endpoint$/);
      expect(JSON.stringify(ofType('AWS::ApiGatewayV2::Integration'))).not.toContain('Observations');
    });
  });

  describe('Tables', () => {
    it.each(['DataTable', 'AuditTable'])('%s: on demand, PITR, encrypted, deletion-protected, retained, pk/sk keys', (id) => {
      const table = resource(id);

      expect(table.Type).toBe('AWS::DynamoDB::Table');
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
      });
    });

    it('expires samples through TTL on the data table attribute `ttl`', () => {
      expect(resource('DataTable').Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
      expect(ofType('AWS::DynamoDB::Table')).toHaveLength(2);
    });
  });

  describe('IAM', () => {
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

    const TENANT_READ_ROLE_ARN = { 'Fn::Sub': 'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/endpoint-read-service-example-tenant-read' };
    const assumeTenantRead = { Sid: 'AssumeTenantReadRole', Effect: 'Allow', Action: ['sts:AssumeRole', 'sts:TagSession'], Resource: TENANT_READ_ROLE_ARN };
    const dynamoOf = (role: string): Statement[] => statementsOf(role).filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));
    const stsOf = (role: string): Statement[] => statementsOf(role).filter((s) => asList(s.Action).some((a) => a.startsWith('sts:')));

    it('gives each function its own role, plus the tenant-read role, and creates no other', () => {
      expect(ofType('AWS::IAM::Role').map(([id]) => id).sort()).toEqual(['InventoryRole', 'McpRole', 'ObservationsRole', 'TenantReadRole']);
      expect(resource('InventoryLambdaFunction').Properties.Role).toEqual(getAtt('InventoryRole'));
      expect(resource('ObservationsLambdaFunction').Properties.Role).toEqual(getAtt('ObservationsRole'));
      expect(resource('McpLambdaFunction').Properties.Role).toEqual(getAtt('McpRole'));
      for (const id of ['InventoryRole', 'ObservationsRole', 'McpRole']) {
        expect(resource(id).Properties.ManagedPolicyArns).toBeUndefined();
        expect(resource(id).Properties.AssumeRolePolicyDocument.Statement).toEqual([
          { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ]);
      }
    });

    it('fences data-table reads by IAM: no function reads it with its own role; each assumes the tenant-read role', () => {
      for (const role of ['InventoryRole', 'ObservationsRole', 'McpRole']) {
        expect(dynamoOf(role).filter((s) => JSON.stringify(s.Resource).includes('DataTable'))).toEqual([]);
        expect(stsOf(role)).toEqual([assumeTenantRead]);
      }
      for (const id of ['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction']) {
        expect(resource(id).Properties.Environment.Variables).toMatchObject({ TENANT_FENCING: 'iam', TENANT_READ_ROLE_ARN: TENANT_READ_ROLE_ARN });
      }
    });

    it('lets the tenant-read role read only the data table\'s tenant partitions, assumed only by the functions with a tenant tag', () => {
      const role = resource('TenantReadRole').Properties;

      expect(role.RoleName).toBe('endpoint-read-service-example-tenant-read');
      expect(role.MaxSessionDuration).toBe(3600);
      expect(role.AssumeRolePolicyDocument.Statement).toEqual([
        {
          Sid: 'TheFunctionsWithATenantTag',
          Effect: 'Allow',
          Principal: { AWS: [getAtt('InventoryRole'), getAtt('ObservationsRole'), getAtt('McpRole')] },
          Action: ['sts:AssumeRole', 'sts:TagSession'],
          Condition: { Null: { 'aws:RequestTag/tenant': 'false' } },
        },
      ]);
      expect(statementsOf('TenantReadRole')).toEqual([
        {
          Sid: 'ReadTenantPartitions',
          Effect: 'Allow',
          Action: ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem'],
          Resource: getAtt('DataTable'),
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*'] } },
        },
      ]);
    });

    it('lets observations only PutItem on the audit table', () => {
      expect(dynamoOf('ObservationsRole')).toEqual([{ Sid: 'WriteAuditItems', Effect: 'Allow', Action: ['dynamodb:PutItem'], Resource: getAtt('AuditTable') }]);
      expect(dynamoOf('InventoryRole')).toEqual([]);
    });

    it('lets mcp read its one secret, and nothing on the audit table', () => {
      const statements = statementsOf('McpRole');
      const secrets = statements.filter((s) => asList(s.Action).some((a) => a.startsWith('secretsmanager:')));

      expect(dynamoOf('McpRole')).toEqual([]);
      expect(secrets).toEqual([
        { Sid: 'ReadBrokerClientSecret', Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: EXAMPLE.brokerSecretArn },
      ]);
      expect(JSON.stringify(statements)).not.toContain('AuditTable');
    });

    it('lets each function write only its own log group', () => {
      for (const [role, logGroup] of [
        ['InventoryRole', 'InventoryLogGroup'],
        ['ObservationsRole', 'ObservationsLogGroup'],
        ['McpRole', 'McpLogGroup'],
      ] as const) {
        const logs = statementsOf(role).filter((s) => asList(s.Action).some((a) => a.startsWith('logs:')));
        expect(logs).toEqual([
          { Sid: 'WriteOwnLogs', Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: getAtt(logGroup) },
        ]);
      }
    });

    it('has no wildcard action, and "*" resources only for actions AWS grants on nothing narrower', () => {
      const all = [...statementsOf('InventoryRole'), ...statementsOf('ObservationsRole'), ...statementsOf('McpRole'), ...statementsOf('TenantReadRole')];

      for (const statement of all) {
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

  describe('Operations', () => {
    it('writes structured logs and EMF metrics under the code namespace, named per stage', () => {
      for (const id of ['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction']) {
        expect(resource(id).Properties.Environment.Variables).toMatchObject({
          POWERTOOLS_SERVICE_NAME: 'endpoint-read-service-example',
          POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
          POWERTOOLS_LOG_LEVEL: 'INFO',
          DATA_TABLE: { Ref: 'DataTable' },
          AUDIT_TABLE: { Ref: 'AuditTable' },
          JWT_ISSUER: EXAMPLE.issuer,
          JWT_AUDIENCE: EXAMPLE.audience,
        });
      }
      // The broker is the client id the token exchange names; by default the one this stack deploys.
      expect(resource('ObservationsLambdaFunction').Properties.Environment.Variables).toMatchObject({
        BROKER_CLAIM: 'act.sub',
        BROKER_ALLOW_LIST: EXAMPLE.brokerClientId,
        OBSERVATIONS_AUDIENCE: 'endpoint-observations',
      });
    });

    it('gives the inventory the memory (one vCPU) and the time its largest streamed answer needs', () => {
      expect(resource('InventoryLambdaFunction').Properties.MemorySize).toBe(1769);
      expect(resource('InventoryLambdaFunction').Properties.Timeout).toBe(240);
      expect(resource('ObservationsLambdaFunction').Properties.MemorySize).toBe(512);
      expect(resource('McpLambdaFunction').Properties.MemorySize).toBe(512);
    });

    it('reserves concurrency for each function, so a storm on one door cannot starve another', () => {
      const reserved = Object.fromEntries(
        ['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction'].map((id) => [id, resource(id).Properties.ReservedConcurrentExecutions]),
      );

      expect(reserved).toEqual({ InventoryLambdaFunction: 40, ObservationsLambdaFunction: 20, McpLambdaFunction: 20 });
    });

    it('keeps every log group for a bounded time: both functions and both APIs', () => {
      const groups = ofType('AWS::Logs::LogGroup');

      expect(groups.map(([id]) => id).sort()).toEqual(['HttpApiLogGroup', 'InventoryLogGroup', 'McpLogGroup', 'ObservationsLogGroup', 'PrivateApiAccessLogGroup']);
      for (const [, group] of groups) expect(group.Properties.RetentionInDays).toBe(30);
      expect(resource('HttpApiStage').Properties.AccessLogSettings.DestinationArn).toEqual(getAtt('HttpApiLogGroup'));
      expect(resource('PrivateApiStage').Properties.AccessLogSetting['Fn::If'][1].DestinationArn).toEqual(getAtt('PrivateApiAccessLogGroup'));
    });

    it('traces every function with X-Ray (active) and the REST stage', () => {
      expect(resource('InventoryLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(resource('ObservationsLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(resource('McpLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(resource('PrivateApiStage').Properties.TracingEnabled).toBe(true);
    });

    describe('Alarms', () => {
      const alarms = (): Json[] => ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
      const lambdaAlarm = (metric: string, fn: string): Json | undefined =>
        alarms().find((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === metric && a.Dimensions?.[0]?.Value?.Ref === fn);

      it.each(['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction'])('watches errors, throttles and p99 duration of %s', (fn) => {
        expect(lambdaAlarm('Errors', fn)).toMatchObject({ Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
        expect(lambdaAlarm('Throttles', fn)).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
        expect(lambdaAlarm('Duration', fn)).toMatchObject({ ExtendedStatistic: 'p99', Threshold: 5000, ComparisonOperator: 'GreaterThanThreshold' });
      });

      it('watches the 5xx rate of the inventory route, the MCP route and the private API as a share of requests', () => {
        const rateAlarms = alarms().filter((a) => Array.isArray(a.Metrics) && String(a.AlarmName).endsWith('-5xx-rate'));
        const metricOf = (a: Json, id: string): Json => (a.Metrics as Json[]).find((m) => m.Id === id)!.MetricStat.Metric;
        const route = (method: string, path: string): Json[] => [
          { Name: 'ApiId', Value: { Ref: 'HttpApi' } },
          { Name: 'Method', Value: method },
          { Name: 'Resource', Value: path },
          { Name: 'Stage', Value: '$default' },
        ];

        expect(rateAlarms).toHaveLength(3);
        for (const alarm of rateAlarms) {
          expect((alarm.Metrics as Json[]).find((m) => m.ReturnData)!.Expression).toBe('IF(requests >= 10, errors / requests, 0)');
          expect(alarm).toMatchObject({ Threshold: '0.05', ComparisonOperator: 'GreaterThanThreshold' });
          expect(metricOf(alarm, 'requests').Dimensions).toEqual(metricOf(alarm, 'errors').Dimensions);
        }
        expect(rateAlarms.map((a) => metricOf(a, 'errors'))).toEqual([
          { Namespace: 'AWS/ApiGateway', MetricName: '5xx', Dimensions: route('GET', '/api/agents') },
          { Namespace: 'AWS/ApiGateway', MetricName: '5xx', Dimensions: route('POST', '/api/mcp') },
          {
            Namespace: 'AWS/ApiGateway',
            MetricName: '5XXError',
            Dimensions: [
              { Name: 'ApiName', Value: resource('PrivateApi').Properties.Name },
              { Name: 'Stage', Value: 'example' },
            ],
          },
        ]);
      });

      it.each([
        ['failures to fetch the issuer key set', METRIC.keySetFailures, 'getEndpointObservations'],
        ['broker misconfigurations', METRIC.brokerMisconfigurations, 'mcp'],
        ['audit write failures', METRIC.auditWriteFailures, 'getEndpointObservations'],
      ])('watches %s, on the metric %s that the operation %s emits', (_what, metric, operation) => {
        expect(alarms().find((a) => a.MetricName === metric)).toMatchObject({
          Namespace: METRICS_NAMESPACE,
          Dimensions: [
            { Name: 'service', Value: 'endpoint-read-service-example' },
            { Name: 'operation', Value: operation },
          ],
          Statistic: 'Sum',
          Threshold: 1,
        });
      });

      it('watches stored items left out because they cannot be read, across every operation that reads them', () => {
        const alarm = alarms().find((a) => String(a.AlarmName).endsWith('-unreadable-records'))!;
        const watched = (alarm.Metrics as Json[]).filter((m) => m.MetricStat).map((m) => [m.MetricStat.Metric.MetricName, m.MetricStat.Metric.Dimensions[1].Value]);

        expect(watched).toEqual([
          [METRIC.unreadableRecords, 'listEndpointInventory'],
          [METRIC.unreadableRecords, 'mcp'],
          [METRIC.unreadableRecords, 'getEndpointObservations'],
          [METRIC.unreadableSamples, 'getEndpointObservations'],
        ]);
        expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
      });

      it('has a runbook entry in docs/operations.md for every alarm it defines', () => {
        const runbook = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
        const headings = runbook.split('\n').filter((line) => line.startsWith('### '));
        const suffixes = alarms().map((a) => String(a.AlarmName).replace(/^endpoint-read-service-example-/, ''));

        for (const suffix of suffixes) expect(headings.some((h) => h.includes(`\`${suffix}\``)), `no runbook entry for ${suffix}`).toBe(true);
      });

      it('notifies the alarm topic from every alarm', () => {
        expect(alarms()).toHaveLength(16);
        for (const alarm of alarms()) {
          expect(alarm.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
          expect(alarm.TreatMissingData).toBe('notBreaching');
        }
      });
    });

    it('has a dashboard with every service metric, both APIs, every function and all alarms', () => {
      const dashboards = ofType('AWS::CloudWatch::Dashboard');
      const body = dashboards[0]![1].Properties.DashboardBody['Fn::Sub'] as string;
      const parsed = JSON.parse(body.replace(/\$\{[^}]+\}/g, 'X')) as { widgets: Json[] };

      expect(dashboards).toHaveLength(1);
      for (const name of Object.values(METRIC)) expect(body).toContain(`"${name}"`);
      for (const ref of ['${HttpApi}', '${InventoryLambdaFunction}', '${ObservationsLambdaFunction}', '${McpLambdaFunction}', '${DataTable}', '${AuditTable}']) {
        expect(body).toContain(ref);
      }
      const alarmWidget = parsed.widgets.find((w) => w.type === 'alarm')!;
      expect(alarmWidget.properties.alarms).toHaveLength(ofType('AWS::CloudWatch::Alarm').length);
    });
  });
});

describe('Template: a stage without its parameters', () => {
  it('refuses to package and names what is missing', () => {
    expect(existsSync(join(ROOT, 'dist', 'private-api-deployment.json'))).toBe(true);
    const require = createRequire(import.meta.url);
    const osls = join(dirname(require.resolve('osls/package.json')), 'bin', 'serverless.js');
    const out = mkdtempSync(join(tmpdir(), 'osls-missing-'));

    const run = spawnSync(process.execPath, [osls, 'package', '--stage', 'prod', '--package', out], {
      cwd: ROOT,
      encoding: 'utf8',
      env: credentialFreeEnv(),
      timeout: 120_000,
    });

    rmSync(out, { recursive: true, force: true });
    const output = `${run.stdout}${run.stderr}`;
    expect(run.status).not.toBe(0);
    expect(output).toContain('Cannot resolve variable at "provider.httpApi.authorizers.jwtAuthorizer.issuerUrl"');
    expect(output).toContain('Value not found at "param" source');
  }, 120_000);
});
