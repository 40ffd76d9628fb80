import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { BenchResults } from '../../bench/report.js';
import { sizing } from '../../bench/targets.js';
import { ROOT } from '../../infra/build.js';
import { INVENTORY_HEAP_FLAGS } from '../../infra/inventory-heap.js';
import { FUNCTION_CONFIGS } from '../../lib/config.js';
import { METRIC, METRICS_NAMESPACE } from '../../lib/observability/metrics.js';
import { type Json, packagedVariant } from '../helpers/package.js';
import { EXAMPLE, getAtt, ofType, resource, state, template } from '../helpers/template.js';

/** What operators rely on in the packaged template: logs, metrics, sizing, concurrency, traces, alarms and the dashboard. */

/** The example stage's parameters as osls read them from serverless.yml: the defaults, then the stage's own. */
function stageParameters(): Record<string, unknown> {
  const { params } = state.service.initialServerlessConfig;
  return { ...params.default, ...params.example };
}

/** The functions' logical ids in the template, by name. */
const FUNCTION_IDS = Object.freeze({
  inventory: 'InventoryLambdaFunction',
  observations: 'ObservationsLambdaFunction',
  mcp: 'McpLambdaFunction',
  authorizer: 'AuthorizerLambdaFunction',
} satisfies Record<keyof typeof FUNCTION_CONFIGS, string>);

/** What every function's runtime reads, besides the service's configuration: Node's and Powertools' own. */
const RUNTIME_VARIABLES = ['NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_LOG_LEVEL'];

/**
 * The variables each function is given: exactly what its configuration schema reads
 * (lib/config.ts), but those the template leaves to Lambda (AWS_REGION), to AWS (no
 * DYNAMODB_ENDPOINT: the SDK finds DynamoDB itself), to the secret store (BROKER_CLIENT_SECRET:
 * the ARN instead) and to the service's defaults (the tuning variables, README, Configuration).
 */
const GIVEN: Readonly<Record<keyof typeof FUNCTION_IDS, readonly string[]>> = Object.freeze({
  inventory: [
    'PUBLIC_URL',
    'REQUIRED_SCOPE',
    'TENANT_CLAIM',
    'ENDPOINT_SCOPE_CLAIM',
    'DATA_TABLE',
    'TENANT_FENCING',
    'TENANT_READ_ROLE_ARN',
  ],
  observations: [
    'JWT_ISSUER',
    'JWKS_URL',
    'OBSERVATIONS_AUDIENCE',
    'REQUIRED_SCOPE',
    'SCOPE_CLAIM',
    'TENANT_CLAIM',
    'ENDPOINT_SCOPE_CLAIM',
    'BROKER_CLAIM',
    'BROKER_ALLOW_LIST',
    'TICKET_SYSTEM',
    'DATA_TABLE',
    'AUDIT_TABLE',
    'TENANT_FENCING',
    'TENANT_READ_ROLE_ARN',
    'TENANT_AUDIT_ROLE_ARN',
  ],
  mcp: [
    'PUBLIC_URL',
    'REQUIRED_SCOPE',
    'TENANT_CLAIM',
    'ENDPOINT_SCOPE_CLAIM',
    'MCP_ALLOWED_ORIGINS',
    'UPSTREAM_TIMEOUT_MS',
    'TICKET_SYSTEM',
    'DATA_TABLE',
    'TENANT_FENCING',
    'TENANT_READ_ROLE_ARN',
    'BROKER_CLIENT_ID',
    'BROKER_CLIENT_SECRET_ARN',
    'TOKEN_ENDPOINT',
    'OBSERVATIONS_AUDIENCE',
    'OBSERVATIONS_URL',
  ],
  authorizer: [
    'JWT_ISSUER',
    'JWKS_URL',
    'JWT_AUDIENCE',
    'MCP_AUDIENCE',
    'PUBLIC_URL',
    'TENANT_CLAIM',
    'ENDPOINT_SCOPE_CLAIM',
    'SCOPE_CLAIM',
  ],
});
/** What a schema reads that the template gives no function (see GIVEN). */
const LEFT_TO_DEFAULTS = [
  'AWS_REGION',
  'DYNAMODB_ENDPOINT',
  'DYNAMODB_TIMEOUT_MS',
  'DYNAMODB_MAX_ATTEMPTS',
  'ONLINE_GRACE_SECONDS',
  'OBSERVATION_TTL_SECONDS',
  'SAMPLE_RETENTION_DAYS',
  'BROKER_CLIENT_SECRET',
];

describe('Template: operations', () => {
  it('writes structured logs and EMF metrics under the code namespace, named per stage', () => {
    for (const id of Object.values(FUNCTION_IDS)) {
      expect(resource(id).Properties.Environment.Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'endpoint-read-service-example',
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
    }
  });

  it.each(Object.entries(FUNCTION_IDS) as Array<[keyof typeof FUNCTION_IDS, string]>)(
    'gives the %s function exactly the variables its configuration schema reads (lib/config.ts), and its runtime its own',
    (name, id) => {
      const given = Object.keys(resource(id).Properties.Environment.Variables).sort();

      expect(given).toEqual([...RUNTIME_VARIABLES, ...GIVEN[name]].sort());
      expect([...GIVEN[name]].sort()).toEqual(FUNCTION_CONFIGS[name].variables.filter((v) => !LEFT_TO_DEFAULTS.includes(v)).sort());
    },
  );

  it('gives the authorizer no table, role or ticket system, and the inventory no issuer: each only what it reads', () => {
    const variables = (id: string): string[] => Object.keys(resource(id).Properties.Environment.Variables);

    for (const name of ['DATA_TABLE', 'AUDIT_TABLE', 'TENANT_READ_ROLE_ARN', 'TENANT_AUDIT_ROLE_ARN', 'TICKET_SYSTEM'])
      expect(variables(FUNCTION_IDS.authorizer)).not.toContain(name);
    expect(variables(FUNCTION_IDS.inventory)).not.toContain('JWT_ISSUER');
    expect(variables(FUNCTION_IDS.mcp)).not.toContain('AUDIT_TABLE');
    // The broker is the client id the token exchange names; by default the one this stack deploys.
    expect(resource(FUNCTION_IDS.observations).Properties.Environment.Variables).toMatchObject({
      BROKER_CLAIM: 'act.sub',
      BROKER_ALLOW_LIST: EXAMPLE.brokerClientId,
      OBSERVATIONS_AUDIENCE: 'endpoint-observations',
      JWT_ISSUER: EXAMPLE.issuer,
      DATA_TABLE: { Ref: 'DataTable' },
      AUDIT_TABLE: { Ref: 'AuditTable' },
    });
    expect(resource(FUNCTION_IDS.authorizer).Properties.Environment.Variables).toMatchObject({
      JWT_ISSUER: EXAMPLE.issuer,
      JWT_AUDIENCE: EXAMPLE.audience,
      PUBLIC_URL: EXAMPLE.publicUrl,
    });
  });

  it("guesses no key path: the functions that check tokens get the issuer and an empty JWKS_URL, and read the issuer's discovery document", () => {
    for (const id of ['AuthorizerLambdaFunction', 'ObservationsLambdaFunction']) {
      expect(resource(id).Properties.Environment.Variables).toMatchObject({ JWT_ISSUER: EXAMPLE.issuer, JWKS_URL: '' });
    }
    // No value anywhere in the template names a key set path (`<issuer>/.well-known/jwks.json` least of all).
    const values = (node: unknown): string[] =>
      typeof node === 'string' ? [node] : node && typeof node === 'object' ? Object.values(node).flatMap(values) : [];
    expect(values(template).filter((value) => /\/\S*jwks/i.test(value))).toEqual([]);
  });

  it("sizes the inventory by the bench's rule on its last full run: memory for the largest tenant's CPU, and its longest answer's time", () => {
    const results = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as BenchResults;
    const measured = sizing(results);
    const inventory = resource('InventoryLambdaFunction').Properties;

    expect(measured).toBeDefined();
    expect(inventory.MemorySize).toBe(measured?.memoryMb);
    expect(inventory.Timeout).toBe(measured?.timeoutSeconds);
    // The streamed answer is never cut before the function would have finished it.
    expect(Number(state.service.functions.inventory.events[0].http.timeoutInMillis)).toBeGreaterThanOrEqual(inventory.Timeout * 1000);
    // The other functions answer one small request each: none is given more than the provider's default.
    for (const id of ['ObservationsLambdaFunction', 'McpLambdaFunction', 'AuthorizerLambdaFunction'])
      expect(resource(id).Properties.MemorySize).toBeLessThanOrEqual(state.service.provider.memorySize);
  });

  it('runs the inventory with the V8 heap flags the bench measures it with, and the other functions without them', () => {
    const options = (id: string): string => String(resource(id).Properties.Environment.Variables.NODE_OPTIONS);

    expect(options('InventoryLambdaFunction').split(/\s+/)).toEqual(['--enable-source-maps', ...INVENTORY_HEAP_FLAGS]);
    for (const id of ['ObservationsLambdaFunction', 'McpLambdaFunction', 'AuthorizerLambdaFunction'])
      expect(options(id)).toBe('--enable-source-maps');
  });

  it("reserves each function the concurrency its stage parameter gives, within what the account's pool can spare", () => {
    const functions = { inventory: 'Inventory', observations: 'Observations', mcp: 'Mcp', authorizer: 'Authorizer' } as const;
    const params = stageParameters();
    const reserved = Object.entries(functions).map(([name, id]) => ({
      name,
      template: resource(`${id}LambdaFunction`).Properties.ReservedConcurrentExecutions,
      parameter: Number(params[`${name}ReservedConcurrency`]),
    }));

    for (const r of reserved) {
      expect(r.parameter, `${r.name}ReservedConcurrency`).toBeGreaterThan(0);
      expect(r.template, r.name).toBe(r.parameter);
    }
    // AWS keeps 100 of an account's default 1,000 unreserved: the stack can never take them all.
    expect(reserved.reduce((sum, r) => sum + r.parameter, 0)).toBeLessThanOrEqual(900);
  });

  it('keeps no MCP instance provisioned by default: no alias, the door calls the function itself', () => {
    const aliases = ofType('AWS::Lambda::Alias');
    const mcpUri = JSON.stringify(resource('ApiGatewayMethodApiMcpPost').Properties.Integration.Uri);

    expect(stageParameters().mcpProvisionedConcurrency).toBe(0);
    expect(aliases).toEqual([]);
    expect(mcpUri).not.toContain('provisioned');
    const mcpPermissions = Object.keys(template.Resources).filter((id) => /^ApiGatewayMethodApiMcp\w+LambdaPermission$/.test(id));
    expect(mcpPermissions.length).toBeGreaterThan(0);
    for (const id of mcpPermissions) expect(resource(id).Properties.FunctionName, id).toEqual(getAtt('McpLambdaFunction'));
  });

  it('keeps the MCP instances a stage asks for initialised (mcpProvisionedConcurrency): an alias with them, which every MCP method and its permission call, within the reserved concurrency', async () => {
    const run = await packagedVariant(inject('packagingDir'), 'mcpProvisioned');
    if (!run.template) throw new Error(`osls package failed:\n${run.output}`);
    const variant = run.template.Resources as Record<string, Json>;
    const aliases = Object.entries(variant).filter(([, r]) => r.Type === 'AWS::Lambda::Alias');
    const methods = Object.entries(variant).filter(
      ([id, r]) => r.Type === 'AWS::ApiGateway::Method' && /^ApiGatewayMethod(WellDashknownOauthDashprotectedDashresource)?ApiMcp/.test(id),
    );
    const lambdaMethods = methods.filter(([, r]) => r.Properties.Integration?.Type === 'AWS_PROXY');

    expect(aliases).toHaveLength(1);
    const [, alias] = aliases[0] ?? [];
    expect(alias?.Properties).toMatchObject({
      FunctionName: { Ref: 'McpLambdaFunction' },
      Name: 'provisioned',
      ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 2 },
    });
    expect(lambdaMethods.length).toBeGreaterThan(0);
    for (const [id, method] of lambdaMethods) {
      expect(JSON.stringify(method.Properties.Integration.Uri), id).toContain('"provisioned"');
      // Lambda lets API Gateway call an alias only by a permission on that alias, made once the alias is.
      const permission = variant[`${id}LambdaPermission`];
      expect(JSON.stringify(permission?.Properties.FunctionName), id).toContain('"provisioned"');
      expect(permission?.DependsOn, id).toBe('McpProvConcLambdaAlias');
    }
    // Lambda refuses more provisioned instances than the function may run at once.
    expect(alias?.Properties.ProvisionedConcurrencyConfig.ProvisionedConcurrentExecutions).toBeLessThanOrEqual(
      variant.McpLambdaFunction?.Properties.ReservedConcurrentExecutions,
    );
    // Only the MCP door: the other functions have no alias and are called as before.
    expect(Object.keys(variant).filter((id) => id.endsWith('LambdaAlias'))).toEqual(['McpProvConcLambdaAlias']);
  }, 120_000);

  it("keeps every log group for a bounded time: every function, both APIs and the web ACL's", () => {
    const groups = ofType('AWS::Logs::LogGroup');

    expect(groups.map(([id]) => id).sort()).toEqual([
      'AuthorizerLogGroup',
      'InventoryLogGroup',
      'McpLogGroup',
      'ObservationsLogGroup',
      'PrivateApiAccessLogGroup',
      'PublicApiAccessLogGroup',
      'PublicApiWafLogGroup',
    ]);
    for (const [, group] of groups) expect(group.Properties.RetentionInDays).toBe(30);
    expect(resource('PublicApiStage').Properties.AccessLogSetting.DestinationArn).toEqual(getAtt('PublicApiAccessLogGroup'));
    expect(resource('PrivateApiStage').Properties.AccessLogSetting.DestinationArn).toEqual(getAtt('PrivateApiAccessLogGroup'));
  });

  it('traces every function with X-Ray (active) and both REST stages', () => {
    expect(resource('AuthorizerLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
    expect(resource('PublicApiStage').Properties.TracingEnabled).toBe(true);
    expect(resource('InventoryLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
    expect(resource('ObservationsLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
    expect(resource('McpLambdaFunction').Properties.TracingConfig).toEqual({ Mode: 'Active' });
    expect(resource('PrivateApiStage').Properties.TracingEnabled).toBe(true);
  });

  describe('Alarms', () => {
    const alarms = (): Json[] => ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const lambdaAlarm = (metric: string, fn: string): Json | undefined =>
      alarms().find((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === metric && a.Dimensions?.[0]?.Value?.Ref === fn);

    const named = (suffix: string): Json => {
      const found = alarms().find((a) => a.AlarmName === `endpoint-read-service-example-${suffix}`);
      if (!found) throw new Error(`no alarm ${suffix}`);
      return found;
    };
    const query = (alarm: Json, id: string): Json => (alarm.Metrics as Json[]).find((m) => m.Id === id)!;

    it.each(['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction'])('watches errors and throttles of %s', (fn) => {
      expect(lambdaAlarm('Errors', fn)).toMatchObject({
        Statistic: 'Sum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      expect(lambdaAlarm('Throttles', fn)).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
    });

    it.each(['ObservationsLambdaFunction', 'McpLambdaFunction'])(
      'watches the p99 duration of %s, whose answers are all short, against the shared 5 s',
      (fn) => {
        expect(lambdaAlarm('Duration', fn)).toMatchObject({
          ExtendedStatistic: 'p99',
          Threshold: 5000,
          ComparisonOperator: 'GreaterThanThreshold',
        });
      },
    );

    it.each([
      ['inventory-duration-near-timeout', 'InventoryLambdaFunction'],
      ['authorizer-duration-near-timeout', 'AuthorizerLambdaFunction'],
    ])('%s: judges the longest invocation of %s against its own timeout, not a shared figure', (suffix, fn) => {
      const alarm = named(suffix);
      const timeoutSeconds = resource(fn).Properties.Timeout as number;

      expect(query(alarm, 'longest').MetricStat).toEqual({
        Metric: { Namespace: 'AWS/Lambda', MetricName: 'Duration', Dimensions: [{ Name: 'FunctionName', Value: { Ref: fn } }] },
        Period: 300,
        Stat: 'Maximum',
      });
      expect(query(alarm, 'share').Expression).toBe(`longest / (1000 * ${timeoutSeconds})`);
      expect(alarm).toMatchObject({ Threshold: '0.8', ComparisonOperator: 'GreaterThanThreshold' });
      expect(lambdaAlarm('Duration', fn)).toBeUndefined();
    });

    it("watches the inventory's time to its first byte, where a person waits, on the metric the function emits", () => {
      expect(named('inventory-p99-first-byte')).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: METRIC.timeToFirstByte,
        Dimensions: [
          { Name: 'service', Value: 'endpoint-read-service-example' },
          { Name: 'operation', Value: 'listEndpointInventory' },
        ],
        ExtendedStatistic: 'p99',
        Threshold: 3000,
        DatapointsToAlarm: 3,
      });
    });

    it('watches API Gateway latency per method, the streamed GET /api/agents apart against its integration timeout, never the whole API', () => {
      const method = (verb: string, path: string): Json[] => [
        { Name: 'ApiName', Value: 'endpoint-read-service-example-public' },
        { Name: 'Method', Value: verb },
        { Name: 'Resource', Value: path },
        { Name: 'Stage', Value: 'example' },
      ];
      const inventory = named('inventory-p99-latency');
      const integrationTimeout = resource('ApiGatewayMethodApiAgentsGet').Properties.Integration.TimeoutInMillis as number;

      expect(named('mcp-p99-latency')).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        MetricName: 'Latency',
        Dimensions: method('POST', '/api/mcp'),
        ExtendedStatistic: 'p99',
        Threshold: 10000,
      });
      expect(query(inventory, 'latency').MetricStat).toMatchObject({
        Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Latency', Dimensions: method('GET', '/api/agents') },
        Stat: 'p99',
      });
      expect(query(inventory, 'share').Expression).toBe(`latency / ${integrationTimeout}`);
      expect(inventory).toMatchObject({ Threshold: '0.8' });
      // Method metrics exist only where the stage enables them: on every method.
      for (const setting of resource('PublicApiStage').Properties.MethodSettings as Json[]) expect(setting.MetricsEnabled).toBe(true);
      const latencyAlarms = alarms().flatMap((a) => [
        a,
        ...((a.Metrics as Json[] | undefined) ?? []).map((m) => m.MetricStat?.Metric ?? {}),
      ]);
      for (const a of latencyAlarms.filter((m) => m.MetricName === 'Latency' && m.Namespace === 'AWS/ApiGateway'))
        expect(a.Dimensions.map((d: Json) => d.Name)).toContain('Method');
    });

    it("watches the authorizer's own errors: Lambda's Errors less the tokens it refused (which Lambda counts as errors), two periods in a row", () => {
      const alarm = named('authorizer-errors');

      expect(query(alarm, 'errors').MetricStat.Metric).toEqual({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'AuthorizerLambdaFunction' } }],
      });
      expect(query(alarm, 'refused').MetricStat.Metric).toEqual({
        Namespace: METRICS_NAMESPACE,
        MetricName: METRIC.tokensRefused,
        Dimensions: [
          { Name: 'service', Value: 'endpoint-read-service-example' },
          { Name: 'operation', Value: 'authorizer' },
        ],
      });
      expect(query(alarm, 'failed')).toMatchObject({ Expression: 'errors - FILL(refused, 0)', ReturnData: true });
      expect(alarm).toMatchObject({
        Threshold: 1,
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    });

    it('watches the 5xx rate of the inventory route, the MCP route and the private API as a share of requests', () => {
      const rateAlarms = alarms().filter((a) => Array.isArray(a.Metrics) && String(a.AlarmName).endsWith('-5xx-rate'));
      const metricOf = (a: Json, id: string): Json => (a.Metrics as Json[]).find((m) => m.Id === id)!.MetricStat.Metric;
      const route = (method: string, path: string): Json[] => [
        { Name: 'ApiName', Value: resource('ApiGatewayRestApi').Properties.Name },
        { Name: 'Method', Value: method },
        { Name: 'Resource', Value: path },
        { Name: 'Stage', Value: 'example' },
      ];

      expect(rateAlarms).toHaveLength(3);
      for (const alarm of rateAlarms) {
        expect((alarm.Metrics as Json[]).find((m) => m.ReturnData)!.Expression).toBe('IF(requests >= 10, errors / requests, 0)');
        expect(alarm).toMatchObject({ Threshold: '0.05', ComparisonOperator: 'GreaterThanThreshold' });
        expect(metricOf(alarm, 'requests').Dimensions).toEqual(metricOf(alarm, 'errors').Dimensions);
      }
      expect(rateAlarms.map((a) => metricOf(a, 'errors'))).toEqual([
        { Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Dimensions: route('GET', '/api/agents') },
        { Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Dimensions: route('POST', '/api/mcp') },
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
      ['token authorizer failures', METRIC.authorizerFailures, 'authorizer'],
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
      const watched = (alarm.Metrics as Json[])
        .filter((m) => m.MetricStat)
        .map((m) => [m.MetricStat.Metric.MetricName, m.MetricStat.Metric.Dimensions[1].Value]);

      expect(watched).toEqual([
        [METRIC.unreadableRecords, 'listEndpointInventory'],
        [METRIC.unreadableRecords, 'mcp'],
        [METRIC.unreadableRecords, 'getEndpointObservations'],
        [METRIC.unreadableSamples, 'getEndpointObservations'],
      ]);
      expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    });

    it("watches the public API's 4xx share and the authorizer's throttles", () => {
      const api = [
        { Name: 'ApiName', Value: 'endpoint-read-service-example-public' },
        { Name: 'Stage', Value: 'example' },
      ];

      expect((named('public-api-4xx-rate').Metrics as Json[]).find((m) => m.Id === 'errors')!.MetricStat.Metric).toEqual({
        Namespace: 'AWS/ApiGateway',
        MetricName: '4XXError',
        Dimensions: api,
      });
      expect(named('public-api-4xx-rate')).toMatchObject({ Threshold: '0.5', ComparisonOperator: 'GreaterThanThreshold' });
      expect(lambdaAlarm('Throttles', 'AuthorizerLambdaFunction')).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
    });

    it('has a runbook entry in docs/operations.md for every alarm it defines', () => {
      const runbook = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
      const headings = runbook.split('\n').filter((line) => line.startsWith('### '));
      const suffixes = alarms().map((a) => String(a.AlarmName).replace(/^endpoint-read-service-example-/, ''));

      for (const suffix of suffixes)
        expect(
          headings.some((h) => h.includes(`\`${suffix}\``)),
          `no runbook entry for ${suffix}`,
        ).toBe(true);
    });

    it('notifies the alarm topic from every alarm, and the topic someone the stage names', () => {
      expect(alarms()).toHaveLength(24);
      for (const alarm of alarms()) {
        expect(alarm.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
        expect(alarm.TreatMissingData).toBe('notBreaching');
      }
      expect(ofType('AWS::SNS::Subscription').map(([, sub]) => sub.Properties)).toEqual([
        { TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: stageParameters().alarmEmail },
      ]);
    });
  });

  it('has a dashboard with every service metric, both APIs, every function and all alarms', () => {
    const dashboards = ofType('AWS::CloudWatch::Dashboard');
    const body = dashboards[0]![1].Properties.DashboardBody['Fn::Sub'] as string;
    const parsed = JSON.parse(body.replace(/\$\{[^}]+\}/g, 'X')) as { widgets: Json[] };

    expect(dashboards).toHaveLength(1);
    for (const name of Object.values(METRIC)) expect(body).toContain(`"${name}"`);
    expect(body).toContain('"ApiName", "endpoint-read-service-example-public"');
    expect(body).toContain('"ApiName", "endpoint-read-service-example-private"');
    for (const ref of [
      '${InventoryLambdaFunction}',
      '${ObservationsLambdaFunction}',
      '${McpLambdaFunction}',
      '${AuthorizerLambdaFunction}',
      '${DataTable}',
      '${AuditTable}',
    ]) {
      expect(body).toContain(ref);
    }
    const alarmWidget = parsed.widgets.find((w) => w.type === 'alarm')!;
    expect(alarmWidget.properties.alarms).toHaveLength(ofType('AWS::CloudWatch::Alarm').length);
  });
});
