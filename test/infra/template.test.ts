import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_PACKAGING_ENV, ROOT } from '../../infra/build.js';
import { METRIC, METRICS_NAMESPACE } from '../../lib/observability/metrics.js';
import { readZip } from './zip.js';

/**
 * Runs `npm run package` as a user would (build, then osls package), offline and without AWS
 * credentials, and reads every guarantee of DESIGN §8 and issue 4 off the generated template.
 * The `example` stage's placeholder parameters (serverless.yml) are the values checked below.
 */

/** Templates are read as plain JSON; the assertions give them their shape. */
type Json = Record<string, any>;

const EXAMPLE = {
  issuer: 'https://issuer.example.com/',
  audience: 'endpoint-read-service',
  vpce: 'vpce-0123456789abcdef0',
  subnets: 'subnet-0123456789abcdef0,subnet-0123456789abcdef1',
  securityGroups: 'sg-0123456789abcdef0',
  brokers: 'arn:aws:iam::123456789012:role/mcp-broker',
};

/** The environment of a machine with no AWS account configured at all. */
function credentialFreeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...OFFLINE_PACKAGING_ENV };
  for (const key of Object.keys(env)) {
    if (/^AWS_/.test(key) && key !== 'AWS_REGION') delete env[key];
  }
  env.AWS_CONFIG_FILE = '/nonexistent/aws-config';
  env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/aws-credentials';
  return env;
}

/** `unshare -n` runs a command in a new network namespace with no interface up: no network at all. */
const canCutNetwork = spawnSync('unshare', ['-n', 'true']).status === 0;

let outDir: string;
let template: Json;
let state: Json;
let packagingSeconds: number;

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

beforeAll(() => {
  outDir = mkdtempSync(join(tmpdir(), 'osls-package-'));
  const started = Date.now();
  const command = ['npm', 'run', '--silent', 'package', '--', '--package', outDir];
  const [file, ...args] = canCutNetwork ? ['unshare', '-n', ...command] : command;
  const run = spawnSync(file!, args, {
    cwd: ROOT,
    encoding: 'utf8',
    env: credentialFreeEnv(),
    timeout: 240_000,
  });
  packagingSeconds = (Date.now() - started) / 1000;
  if (run.status !== 0) throw new Error(`npm run package failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  template = JSON.parse(readFileSync(join(outDir, 'cloudformation-template-update-stack.json'), 'utf8')) as Json;
  state = JSON.parse(readFileSync(join(outDir, 'serverless-state.json'), 'utf8')) as Json;
}, 300_000);

afterAll(() => {
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

describe('Template: npm run package', () => {
  it(`packages with no AWS credentials${canCutNetwork ? ' and no network' : ''}, in reasonable time`, () => {
    expect(Object.keys(template.Resources as Json).length).toBeGreaterThan(30);
    expect(packagingSeconds).toBeLessThan(240);
  });

  describe('Bundles', () => {
    it.each([
      ['inventory', 'InventoryLambdaFunction'],
      ['observations', 'ObservationsLambdaFunction'],
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

  describe('Inventory: public HTTP API', () => {
    it('routes only GET /api/agents, through a JWT authorizer with the stage issuer and audience', () => {
      const routes = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
      const [authorizerId, authorizer] = ofType('AWS::ApiGatewayV2::Authorizer')[0]!;

      expect(routes.map((r) => r.RouteKey)).toEqual(['GET /api/agents']);
      expect(routes[0]).toMatchObject({ AuthorizationType: 'JWT', AuthorizerId: { Ref: authorizerId } });
      expect(authorizer.Properties).toMatchObject({
        AuthorizerType: 'JWT',
        IdentitySource: ['$request.header.Authorization'],
        JwtConfiguration: { Issuer: EXAMPLE.issuer, Audience: [EXAMPLE.audience] },
      });
    });

    it('sends payload 2.0 events to the inventory function', () => {
      const [, integration] = ofType('AWS::ApiGatewayV2::Integration')[0]!;

      expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      expect(JSON.stringify(integration.Properties.IntegrationUri)).toContain('InventoryLambdaFunction');
    });

    it('throttles the route on the stage', () => {
      const stage = resource('HttpApiStage');

      expect(stage.Properties.RouteSettings['GET /api/agents']).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
      expect(stage.Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
      expect(asList(stage.DependsOn)).toContain('HttpApiRouteGetApiAgents');
    });
  });

  describe('Observations: private REST API', () => {
    it('is the only REST API, private, bound to the execute-api VPC endpoint', () => {
      const apis = ofType('AWS::ApiGateway::RestApi');

      expect(apis.map(([id]) => id)).toEqual(['PrivateApi']);
      expect(apis[0]![1].Properties.EndpointConfiguration).toEqual({ Types: ['PRIVATE'], VpcEndpointIds: [EXAMPLE.vpce] });
    });

    it('has a resource policy that admits only the broker roles through that endpoint', () => {
      const statements = resource('PrivateApi').Properties.Policy.Statement as Json[];
      const allows = statements.filter((s) => s.Effect === 'Allow');
      const denies = statements.filter((s) => s.Effect === 'Deny');

      expect(allows).toHaveLength(1);
      expect(allows[0]).toMatchObject({
        Principal: { AWS: { 'Fn::Split': [',', EXAMPLE.brokers] } },
        Action: 'execute-api:Invoke',
        Resource: 'execute-api:/example/GET/api/mcp/endpoint',
        Condition: { StringEquals: { 'aws:SourceVpce': EXAMPLE.vpce } },
      });
      expect(denies).toContainEqual(
        expect.objectContaining({
          Principal: '*',
          Resource: 'execute-api:/*',
          Condition: { StringNotEquals: { 'aws:SourceVpce': EXAMPLE.vpce } },
        }),
      );
      expect(denies).toContainEqual(
        expect.objectContaining({
          Principal: '*',
          Resource: 'execute-api:/*',
          Condition: { ArnNotEquals: { 'aws:PrincipalArn': { 'Fn::Split': [',', EXAMPLE.brokers] } } },
        }),
      );
    });

    it('exposes GET /api/mcp/endpoint only, with AWS_IAM auth and a Lambda proxy to observations', () => {
      const methods = ofType('AWS::ApiGateway::Method');
      const paths = ofType('AWS::ApiGateway::Resource').map(([, r]) => r.Properties.PathPart);
      const method = methods[0]![1].Properties;

      expect(paths).toEqual(['api', 'mcp', 'endpoint']);
      expect(methods).toHaveLength(1);
      expect(method).toMatchObject({
        HttpMethod: 'GET',
        AuthorizationType: 'AWS_IAM',
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

    it('gives each function its own role, and creates no other', () => {
      expect(ofType('AWS::IAM::Role').map(([id]) => id).sort()).toEqual(['InventoryRole', 'ObservationsRole']);
      expect(resource('InventoryLambdaFunction').Properties.Role).toEqual(getAtt('InventoryRole'));
      expect(resource('ObservationsLambdaFunction').Properties.Role).toEqual(getAtt('ObservationsRole'));
      for (const id of ['InventoryRole', 'ObservationsRole']) {
        expect(resource(id).Properties.ManagedPolicyArns).toBeUndefined();
        expect(resource(id).Properties.AssumeRolePolicyDocument.Statement).toEqual([
          { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ]);
      }
    });

    it('lets inventory Query and GetItem on the data table, and nothing else on DynamoDB', () => {
      const dynamo = statementsOf('InventoryRole').filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));

      expect(dynamo).toEqual([
        { Sid: 'ReadDataTable', Effect: 'Allow', Action: ['dynamodb:Query', 'dynamodb:GetItem'], Resource: getAtt('DataTable') },
      ]);
    });

    it('lets observations Query and GetItem on the data table and only PutItem on the audit table', () => {
      const dynamo = statementsOf('ObservationsRole').filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));

      expect(dynamo).toEqual([
        { Sid: 'ReadDataTable', Effect: 'Allow', Action: ['dynamodb:Query', 'dynamodb:GetItem'], Resource: getAtt('DataTable') },
        { Sid: 'WriteAuditItems', Effect: 'Allow', Action: ['dynamodb:PutItem'], Resource: getAtt('AuditTable') },
      ]);
    });

    it('lets each function write only its own log group', () => {
      for (const [role, logGroup] of [
        ['InventoryRole', 'InventoryLogGroup'],
        ['ObservationsRole', 'ObservationsLogGroup'],
      ] as const) {
        const logs = statementsOf(role).filter((s) => asList(s.Action).some((a) => a.startsWith('logs:')));
        expect(logs).toEqual([
          { Sid: 'WriteOwnLogs', Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: getAtt(logGroup) },
        ]);
      }
    });

    it('has no wildcard action, and "*" resources only for actions AWS grants on nothing narrower', () => {
      const all = [...statementsOf('InventoryRole'), ...statementsOf('ObservationsRole')];

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
      for (const id of ['InventoryLambdaFunction', 'ObservationsLambdaFunction']) {
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
      expect(resource('ObservationsLambdaFunction').Properties.Environment.Variables.BROKER_ALLOW_LIST).toBe(EXAMPLE.brokers);
    });

    it('keeps every log group for a bounded time: both functions and both APIs', () => {
      const groups = ofType('AWS::Logs::LogGroup');

      expect(groups.map(([id]) => id).sort()).toEqual(['HttpApiLogGroup', 'InventoryLogGroup', 'ObservationsLogGroup', 'PrivateApiAccessLogGroup']);
      for (const [, group] of groups) expect(group.Properties.RetentionInDays).toBe(30);
      expect(resource('HttpApiStage').Properties.AccessLogSettings.DestinationArn).toEqual(getAtt('HttpApiLogGroup'));
      expect(resource('PrivateApiStage').Properties.AccessLogSetting['Fn::If'][1].DestinationArn).toEqual(getAtt('PrivateApiAccessLogGroup'));
    });

    it('traces both functions with X-Ray (active) and the REST stage', () => {
      expect(resource('InventoryLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(resource('ObservationsLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(resource('PrivateApiStage').Properties.TracingEnabled).toBe(true);
    });

    describe('Alarms', () => {
      const alarms = (): Json[] => ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
      const lambdaAlarm = (metric: string, fn: string): Json | undefined =>
        alarms().find((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === metric && a.Dimensions?.[0]?.Value?.Ref === fn);

      it.each(['InventoryLambdaFunction', 'ObservationsLambdaFunction'])('watches errors, throttles and p99 duration of %s', (fn) => {
        expect(lambdaAlarm('Errors', fn)).toMatchObject({ Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
        expect(lambdaAlarm('Throttles', fn)).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
        expect(lambdaAlarm('Duration', fn)).toMatchObject({ ExtendedStatistic: 'p99', Threshold: 5000, ComparisonOperator: 'GreaterThanThreshold' });
      });

      it('watches the 5xx rate of both APIs as a share of requests', () => {
        const rateAlarms = alarms().filter((a) => Array.isArray(a.Metrics));
        const metricOf = (a: Json, id: string): Json => (a.Metrics as Json[]).find((m) => m.Id === id)!.MetricStat.Metric;

        expect(rateAlarms).toHaveLength(2);
        for (const alarm of rateAlarms) {
          expect((alarm.Metrics as Json[]).find((m) => m.ReturnData)!.Expression).toBe('IF(requests >= 10, errors / requests, 0)');
          expect(alarm).toMatchObject({ Threshold: '0.05', ComparisonOperator: 'GreaterThanThreshold' });
        }
        expect(rateAlarms.map((a) => metricOf(a, 'errors'))).toEqual([
          { Namespace: 'AWS/ApiGateway', MetricName: '5xx', Dimensions: [{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }] },
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

      it('watches audit write failures, on the metric the code emits', () => {
        const audit = alarms().find((a) => a.MetricName === METRIC.auditWriteFailures);

        expect(audit).toMatchObject({
          Namespace: METRICS_NAMESPACE,
          Dimensions: [
            { Name: 'service', Value: 'endpoint-read-service-example' },
            { Name: 'operation', Value: 'getEndpointObservations' },
          ],
          Statistic: 'Sum',
          Threshold: 1,
        });
      });

      it('notifies the alarm topic from every alarm', () => {
        expect(alarms()).toHaveLength(9);
        for (const alarm of alarms()) {
          expect(alarm.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
          expect(alarm.TreatMissingData).toBe('notBreaching');
        }
      });
    });

    it('has a dashboard with every service metric, both APIs, both functions and all alarms', () => {
      const dashboards = ofType('AWS::CloudWatch::Dashboard');
      const body = dashboards[0]![1].Properties.DashboardBody['Fn::Sub'] as string;
      const parsed = JSON.parse(body.replace(/\$\{[^}]+\}/g, 'X')) as { widgets: Json[] };

      expect(dashboards).toHaveLength(1);
      // Issue 9 added these two counts; their widgets and alarms come with the operator's infra change.
      // Remove a name from this list when infra/dashboard.yml shows it.
      const awaitingDashboard = new Set<string>([METRIC.unreadableRecords, METRIC.unreadableSamples]);
      for (const name of Object.values(METRIC)) {
        if (awaitingDashboard.has(name)) expect(body.includes(`"${name}"`), `${name} is on the dashboard now: remove it from awaitingDashboard`).toBe(false);
        else expect(body).toContain(`"${name}"`);
      }
      for (const ref of ['${HttpApi}', '${InventoryLambdaFunction}', '${ObservationsLambdaFunction}', '${DataTable}', '${AuditTable}']) {
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
