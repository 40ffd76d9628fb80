import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { FUNCTIONS, ROOT } from '../../infra/build.js';
import { GATEWAY_RESPONSES, gatewayResponseResources } from '../../infra/gateway-responses.js';
import { INVENTORY_HEAP_FLAGS } from '../../infra/inventory-heap.js';
import { ROUTES, type Route } from '../../infra/local/routes.js';
import { DOORS } from '../../lib/auth/doors.js';
import { METRIC, METRICS_NAMESPACE } from '../../lib/observability/metrics.js';
import { canCutNetwork, credentialFreeEnv, fragmentResourceIds, type Json, packagedTemplate } from '../helpers/package.js';
import { readZip } from './zip.js';

/**
 * Runs `npm run package` as a user would (build, then osls package), offline and without AWS
 * credentials, and reads every guarantee of DESIGN §8 and issue 4 off the generated template.
 * The `example` stage's placeholder parameters (serverless.yml) are the values checked below.
 */

const EXAMPLE = {
  issuer: 'https://issuer.example.com/',
  audience: 'endpoint-read-service',
  publicUrl: 'https://api.example.com',
  vpce: 'vpce-0123456789abcdef0',
  subnets: 'subnet-0123456789abcdef0,subnet-0123456789abcdef1',
  securityGroups: 'sg-0123456789abcdef0',
  mcpAudience: 'https://api.example.com/api/mcp',
  tokenEndpoint: 'https://issuer.example.com/oauth2/token',
  brokerClientId: 'mcp-broker',
  brokerSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp-broker-client-secret-AbCdEf',
};

// Packaged once per run, started by the template project's global setup (test/helpers/template-setup.ts).
const { template, state } = await packagedTemplate(inject('packagingDir'));

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

interface TemplateRoute extends Route {
  id: string;
}

/**
 * The routes of both REST APIs as the template has them: each method's path (walked up its
 * resources), the function its integration invokes, the door of its authorizer and its transfer mode.
 */
function routesOfTemplate(): TemplateRoute[] {
  const pathOf = (ref: Json | undefined, api: string): string => {
    if (!ref?.Ref) return '';
    const r = resource(ref.Ref as string).Properties;
    return `${pathOf(r.ParentId, api)}/${r.PathPart as string}`;
  };
  const doorOf = (authorizerId: Json | undefined): Route['authorizer'] => {
    if (!authorizerId) return null;
    const name = resource(authorizerId.Ref as string).Properties.Name as string;
    return Object.values(DOORS).find((d) => d.authorizerName === name)!.name;
  };
  return ofType('AWS::ApiGateway::Method').map(([id, m]) => {
    const p = m.Properties;
    const api = p.RestApiId.Ref === 'PrivateApi' ? 'private' : 'public';
    const fn = /(Inventory|Mcp|Observations)LambdaFunction/.exec(JSON.stringify(p.Integration.Uri))![1]!.toLowerCase() as Route['function'];
    return {
      id,
      api,
      method: p.HttpMethod,
      resource: pathOf(p.ResourceId, api),
      function: fn,
      authorizer: doorOf(p.AuthorizerId),
      transferMode: p.Integration.ResponseTransferMode ?? 'BUFFERED',
    };
  });
}

describe('Template: npm run package', () => {
  it(`packages with no AWS credentials${canCutNetwork ? ' and no network' : ''} a template holding every resource of infra/*.yml and a function per bundle`, () => {
    const ids = Object.keys(template.Resources as Json);

    expect(fragmentResourceIds().filter((id) => !ids.includes(id))).toEqual([]);
    expect(
      ofType('AWS::Lambda::Function')
        .map(([id]) => id)
        .sort(),
    ).toEqual(expect.arrayContaining(Object.keys(FUNCTIONS).map((name) => `${name[0]!.toUpperCase()}${name.slice(1)}LambdaFunction`)));
  });

  describe('Bundles', () => {
    it.each([
      ['inventory', 'InventoryLambdaFunction'],
      ['observations', 'ObservationsLambdaFunction'],
      ['mcp', 'McpLambdaFunction'],
      ['authorizer', 'AuthorizerLambdaFunction'],
    ])('ships %s as its own esbuild zip on nodejs22.x with source maps enabled', (name, id) => {
      const fn = resource(id).Properties;
      const artifact = state.service.functions[name].package.artifact as string;

      expect(fn.Runtime).toBe('nodejs22.x');
      expect(fn.Handler).toBe('index.handler');
      expect(fn.Environment.Variables.NODE_OPTIONS).toContain('--enable-source-maps');
      expect(fn.Code.S3Key).toMatch(new RegExp(`/${name}\\.zip$`));
      expect(artifact).toBe(`dist/${name}.zip`);
      const entries = readZip(readFileSync(join(ROOT, artifact))).map((e) => e.name);
      expect(entries).toEqual([...(name === 'mcp' ? ['endpoint-view.html'] : []), 'index.mjs', 'index.mjs.map']);
    });
  });

  describe('Public REST API: inventory and the MCP door', () => {
    const publicMethods = (): Array<[string, Json]> =>
      ofType('AWS::ApiGateway::Method').filter(([, m]) => m.Properties.RestApiId.Ref === 'ApiGatewayRestApi');
    const methodAt = (method: string, path: string): Json => {
      const found = routesOfTemplate().find((r) => r.method === method && r.resource === path);
      if (!found) throw new Error(`no method ${method} ${path} in the template`);
      return resource(found.id).Properties;
    };

    it('is one regional REST API beside the private one, and no HTTP API is left', () => {
      expect(
        ofType('AWS::ApiGateway::RestApi')
          .map(([id]) => id)
          .sort(),
      ).toEqual(['ApiGatewayRestApi', 'PrivateApi']);
      expect(resource('ApiGatewayRestApi').Properties).toMatchObject({
        Name: 'endpoint-read-service-example-public',
        EndpointConfiguration: { Types: ['REGIONAL'] },
      });
      expect(resources().filter(([, r]) => String(r.Type).startsWith('AWS::ApiGatewayV2::'))).toEqual([]);
      expect(JSON.stringify(template)).not.toMatch(/HttpApi|httpApi/);
    });

    it('has exactly the routes of the local gateway (infra/local/routes.ts): methods, functions, authorizers and transfer modes', () => {
      const local = ROUTES.map(
        (r) => `${r.api} ${r.method} ${r.resource} -> ${r.function} [${r.authorizer ?? 'none'}, ${r.transferMode}]`,
      ).sort();
      const deployed = routesOfTemplate()
        .map((r) => `${r.api} ${r.method} ${r.resource} -> ${r.function} [${r.authorizer ?? 'none'}, ${r.transferMode}]`)
        .sort();

      expect(deployed).toEqual(local);
    });

    it('guards each door with its own REQUEST authorizer, both the authorizer function, cached as lib/auth/doors.ts says', () => {
      const authorizers = ofType('AWS::ApiGateway::Authorizer').map(([, a]) => a.Properties);

      expect(authorizers).toHaveLength(2);
      for (const door of Object.values(DOORS)) {
        const authorizer = authorizers.find((a) => a.Name === door.authorizerName)!;
        expect(authorizer).toMatchObject({
          Type: 'REQUEST',
          RestApiId: { Ref: 'ApiGatewayRestApi' },
          AuthorizerResultTtlInSeconds: door.cacheTtlSeconds,
        });
        expect(authorizer.IdentitySource).toBe(door.identitySource ? `method.request.header.${door.identitySource}` : undefined);
        expect(JSON.stringify(authorizer.AuthorizerUri)).toContain('"AuthorizerLambdaFunction","Arn"');
      }
      // No identity source means no cache: the inventory door's authorizer is asked every time.
      expect(DOORS.inventory).toMatchObject({ identitySource: null, cacheTtlSeconds: 0, refusal: 'deny' });
      expect(DOORS.mcp).toMatchObject({ identitySource: 'Authorization', refusal: 'unauthorized' });
    });

    it('lets API Gateway invoke the authorizer function, and nothing else', () => {
      const permissions = ofType('AWS::Lambda::Permission')
        .map(([, p]) => p.Properties)
        .filter((p) => JSON.stringify(p.FunctionName).includes('AuthorizerLambdaFunction'));

      expect(permissions).toHaveLength(2);
      for (const permission of permissions) {
        expect(permission).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
        expect(JSON.stringify(permission.SourceArn)).toContain('"Ref":"ApiGatewayRestApi"');
      }
      expect(resource('AuthorizerLambdaFunction').Properties).toMatchObject({
        MemorySize: 256,
        Timeout: 6,
        Environment: { Variables: { MCP_AUDIENCE: EXAMPLE.mcpAudience } },
      });
      expect(resource('AuthorizerLambdaFunction').Properties.VpcConfig).toBeUndefined();
      // An inventory token must not open the MCP door: the audiences the authorizer checks at the two doors differ.
      const audiences = resource('AuthorizerLambdaFunction').Properties.Environment.Variables;
      expect(audiences.JWT_AUDIENCE).not.toEqual(audiences.MCP_AUDIENCE);
    });

    it("streams the inventory through Lambda's response-streaming invocation, with its own integration timeout", () => {
      const integration = methodAt('GET', '/api/agents').Integration;

      expect(integration).toMatchObject({
        Type: 'AWS_PROXY',
        IntegrationHttpMethod: 'POST',
        ResponseTransferMode: 'STREAM',
        TimeoutInMillis: 180000,
      });
      // The gateway never cuts a stream the function would still finish.
      expect(integration.TimeoutInMillis).toBeGreaterThanOrEqual(resource('InventoryLambdaFunction').Properties.Timeout * 1000);
      expect(integration.Uri['Fn::Join'][1]).toEqual(
        expect.arrayContaining([
          ':lambda:path/2021-11-15/functions/',
          { 'Fn::GetAtt': ['InventoryLambdaFunction', 'Arn'] },
          '/response-streaming-invocations',
        ]),
      );
      for (const [, method] of publicMethods().filter(([, m]) => m !== resource('ApiGatewayMethodApiAgentsGet'))) {
        expect(method.Properties.Integration.ResponseTransferMode).toBeUndefined();
        expect(method.Properties.Integration.Uri['Fn::Join'][1]).toContain('/invocations');
      }
    });

    it('serves the RFC 9728 documents and the CORS preflight without any authorizer, and nothing else', () => {
      const open = routesOfTemplate().filter((r) => r.api === 'public' && r.authorizer === null);

      expect(open.map((r) => `${r.method} ${r.resource}`).sort()).toEqual([
        'GET /.well-known/oauth-protected-resource',
        'GET /.well-known/oauth-protected-resource/api/agents',
        'GET /.well-known/oauth-protected-resource/api/mcp',
        'OPTIONS /.well-known/oauth-protected-resource',
        'OPTIONS /.well-known/oauth-protected-resource/api/agents',
        'OPTIONS /.well-known/oauth-protected-resource/api/mcp',
        'OPTIONS /api/mcp',
      ]);
      for (const r of open) expect(resource(r.id).Properties.AuthorizationType).toBe('NONE');
      expect(routesOfTemplate().map((r) => `${r.api} ${r.resource}`)).not.toContain('public /api/mcp/endpoint');
    });

    it("answers every refusal API Gateway makes itself in the contract's words: the table of infra/gateway-responses.ts", () => {
      const responses = Object.fromEntries(ofType('AWS::ApiGateway::GatewayResponse'));

      expect(responses).toEqual(gatewayResponseResources(EXAMPLE.publicUrl, 'https://no-browser-origin.invalid'));
      expect(Object.keys(responses)).toHaveLength(GATEWAY_RESPONSES.length);
      for (const response of Object.values(responses)) {
        const headers = response.Properties.ResponseParameters;
        expect(headers['gatewayresponse.header.Content-Type']).toBe("'text/plain; charset=utf-8'");
        expect(headers['gatewayresponse.header.Cache-Control']).toBe("'no-store'");
        // Readable by the stage's one browser origin (none by default: a reserved name no page has), the challenge exposed.
        expect(headers['gatewayresponse.header.Access-Control-Allow-Origin']).toBe("'https://no-browser-origin.invalid'");
        expect(headers['gatewayresponse.header.Access-Control-Expose-Headers']).toBe("'WWW-Authenticate, Mcp-Protocol-Version'");
        expect(headers['gatewayresponse.header.Vary']).toBe("'Origin'");
        for (const body of Object.values(response.Properties.ResponseTemplates as Record<string, string>))
          expect(body).toMatch(/^[^\n]+ \(request id: \$context\.requestId\)\n$/);
      }
    });

    it('points each 401 at the RFC 9728 document of the door whose refusals it answers', () => {
      const headersOf = (type: string): Json =>
        ofType('AWS::ApiGateway::GatewayResponse').find(([, r]) => r.Properties.ResponseType === type)![1].Properties;

      expect(headersOf('UNAUTHORIZED')).toMatchObject({
        StatusCode: '401',
        ResponseParameters: {
          'gatewayresponse.header.WWW-Authenticate': `'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/mcp"'`,
        },
      });
      expect(headersOf('ACCESS_DENIED')).toMatchObject({
        StatusCode: '401',
        ResponseParameters: {
          'gatewayresponse.header.WWW-Authenticate': `'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/agents"'`,
        },
        ResponseTemplates: { 'text/plain': '$context.authorizer.refusal (request id: $context.requestId)\n' },
      });
      expect(headersOf('AUTHORIZER_FAILURE')).toMatchObject({
        StatusCode: '503',
        ResponseParameters: { 'gatewayresponse.header.Retry-After': "'5'" },
      });
      expect(headersOf('AUTHORIZER_CONFIGURATION_ERROR')).toMatchObject({
        StatusCode: '503',
        ResponseParameters: { 'gatewayresponse.header.Retry-After': "'30'" },
      });
      expect(headersOf('THROTTLED')).toMatchObject({
        StatusCode: '429',
        ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
      });
      expect(headersOf('INTEGRATION_TIMEOUT').StatusCode).toBe('504');
      expect(headersOf('REQUEST_TOO_LARGE').StatusCode).toBe('413');
      expect(headersOf('MISSING_AUTHENTICATION_TOKEN').StatusCode).toBe('404');
      expect(headersOf('DEFAULT_4XX').StatusCode).toBeUndefined();
    });

    it('publishes a fresh deployment, made after the gateway responses, to a traced, throttled and logged stage', () => {
      const stage = resource('PublicApiStage').Properties;
      const deployments = ofType('AWS::ApiGateway::Deployment').filter(([, d]) => d.Properties.RestApiId.Ref === 'ApiGatewayRestApi');
      const [deploymentId, deployment] = deployments[0]!;

      expect(deployments).toHaveLength(1);
      expect(stage).toMatchObject({
        RestApiId: { Ref: 'ApiGatewayRestApi' },
        StageName: 'example',
        DeploymentId: { Ref: deploymentId },
        TracingEnabled: true,
      });
      expect(deployment.Properties.StageName).toBeUndefined();
      expect(asList(deployment.DependsOn)).toEqual(
        expect.arrayContaining([...publicMethods().map(([id]) => id), ...ofType('AWS::ApiGateway::GatewayResponse').map(([id]) => id)]),
      );
      const limits = (path: string, method: string): Json =>
        (stage.MethodSettings as Json[]).find((m) => m.ResourcePath === path && m.HttpMethod === method)!;
      expect(limits('/*', '*')).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
      expect(limits('/~1api~1agents', 'GET')).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
      for (const method of ['POST', 'GET', 'DELETE', 'OPTIONS'])
        expect(limits('/~1api~1mcp', method)).toMatchObject({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 });
      for (const setting of stage.MethodSettings as Json[])
        expect(setting).toMatchObject({ MetricsEnabled: true, LoggingLevel: 'OFF', DataTraceEnabled: false });
      const [condition, logs] = stage.AccessLogSetting['Fn::If'] as [string, Json];
      expect(condition).toBe('RestApiAccessLogsEnabled');
      expect(logs.DestinationArn).toEqual(getAtt('PublicApiAccessLogGroup'));
      expect(JSON.parse(logs.Format as string)).toMatchObject({
        requestId: '$context.requestId',
        status: '$context.status',
        authorizerError: '$context.authorizer.error',
        gatewayResponse: '$context.error.responseType',
      });
    });

    it('attaches no web ACL unless the stage asks for one (wafRateLimit)', () => {
      expect(template.Conditions.WafEnabled).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['0', '0'] }] });
      expect(resource('PublicApiWebAcl').Condition).toBe('WafEnabled');
      expect(resource('PublicApiWebAclAssociation').Condition).toBe('WafEnabled');
      expect(resources().filter(([, r]) => String(r.Type).startsWith('AWS::WAFv2::') && r.Condition !== 'WafEnabled')).toEqual([]);
    });

    it('runs the MCP function in the VPC, calling the private API by its name and reading its client secret by ARN only', () => {
      const fn = resource('McpLambdaFunction').Properties;

      expect(fn.VpcConfig).toEqual({
        SubnetIds: { 'Fn::Split': [',', EXAMPLE.subnets] },
        SecurityGroupIds: { 'Fn::Split': [',', EXAMPLE.securityGroups] },
      });
      expect(fn.Environment.Variables).toMatchObject({
        MCP_AUDIENCE: EXAMPLE.mcpAudience,
        PUBLIC_URL: EXAMPLE.publicUrl,
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
    it('is private, bound to the execute-api VPC endpoint', () => {
      expect(resource('PrivateApi').Properties.EndpointConfiguration).toEqual({ Types: ['PRIVATE'], VpcEndpointIds: [EXAMPLE.vpce] });
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
      const methods = ofType('AWS::ApiGateway::Method').filter(([, m]) => m.Properties.RestApiId.Ref === 'PrivateApi');
      const paths = ofType('AWS::ApiGateway::Resource')
        .filter(([, r]) => r.Properties.RestApiId.Ref === 'PrivateApi')
        .map(([, r]) => r.Properties.PathPart);
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
      expect(
        routesOfTemplate()
          .filter((r) => r.function === 'observations')
          .map((r) => r.api),
      ).toEqual(['private']);
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
    const dynamoOf = (role: string): Statement[] =>
      statementsOf(role).filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));
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

  describe('Operations', () => {
    it('writes structured logs and EMF metrics under the code namespace, named per stage', () => {
      for (const id of ['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction', 'AuthorizerLambdaFunction']) {
        expect(resource(id).Properties.Environment.Variables).toMatchObject({
          POWERTOOLS_SERVICE_NAME: 'endpoint-read-service-example',
          POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
          POWERTOOLS_LOG_LEVEL: 'INFO',
          DATA_TABLE: { Ref: 'DataTable' },
          AUDIT_TABLE: { Ref: 'AuditTable' },
          JWT_ISSUER: EXAMPLE.issuer,
          JWT_AUDIENCE: EXAMPLE.audience,
          PUBLIC_URL: EXAMPLE.publicUrl,
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
      expect(resource('InventoryLambdaFunction').Properties.Timeout).toBe(180);
      expect(resource('ObservationsLambdaFunction').Properties.MemorySize).toBe(512);
      expect(resource('McpLambdaFunction').Properties.MemorySize).toBe(512);
      expect(resource('AuthorizerLambdaFunction').Properties.MemorySize).toBe(256);
    });

    it('runs the inventory with the V8 heap flags the bench measures it with, and the other functions without them', () => {
      const options = (id: string): string => String(resource(id).Properties.Environment.Variables.NODE_OPTIONS);

      expect(options('InventoryLambdaFunction').split(/\s+/)).toEqual(['--enable-source-maps', ...INVENTORY_HEAP_FLAGS]);
      for (const id of ['ObservationsLambdaFunction', 'McpLambdaFunction', 'AuthorizerLambdaFunction'])
        expect(options(id)).toBe('--enable-source-maps');
    });

    it('reserves concurrency for each function, so a storm on one door cannot starve another', () => {
      const reserved = Object.fromEntries(
        ['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction', 'AuthorizerLambdaFunction'].map((id) => [
          id,
          resource(id).Properties.ReservedConcurrentExecutions,
        ]),
      );

      expect(reserved).toEqual({
        InventoryLambdaFunction: 40,
        ObservationsLambdaFunction: 20,
        McpLambdaFunction: 20,
        AuthorizerLambdaFunction: 10,
      });
    });

    it('keeps every log group for a bounded time: every function and both APIs', () => {
      const groups = ofType('AWS::Logs::LogGroup');

      expect(groups.map(([id]) => id).sort()).toEqual([
        'AuthorizerLogGroup',
        'InventoryLogGroup',
        'McpLogGroup',
        'ObservationsLogGroup',
        'PrivateApiAccessLogGroup',
        'PublicApiAccessLogGroup',
      ]);
      for (const [, group] of groups) expect(group.Properties.RetentionInDays).toBe(30);
      expect(resource('PublicApiStage').Properties.AccessLogSetting['Fn::If'][1].DestinationArn).toEqual(getAtt('PublicApiAccessLogGroup'));
      expect(resource('PrivateApiStage').Properties.AccessLogSetting['Fn::If'][1].DestinationArn).toEqual(
        getAtt('PrivateApiAccessLogGroup'),
      );
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

      it.each(['InventoryLambdaFunction', 'ObservationsLambdaFunction', 'McpLambdaFunction'])(
        'watches errors, throttles and p99 duration of %s',
        (fn) => {
          expect(lambdaAlarm('Errors', fn)).toMatchObject({
            Statistic: 'Sum',
            Threshold: 1,
            ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          });
          expect(lambdaAlarm('Throttles', fn)).toMatchObject({ Statistic: 'Sum', Threshold: 1 });
          expect(lambdaAlarm('Duration', fn)).toMatchObject({
            ExtendedStatistic: 'p99',
            Threshold: 5000,
            ComparisonOperator: 'GreaterThanThreshold',
          });
        },
      );

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

      it("watches the public API's 4xx share, its p99 latency and the authorizer's throttles", () => {
        const named = (suffix: string): Json => alarms().find((a) => a.AlarmName === `endpoint-read-service-example-${suffix}`)!;
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
        expect(named('public-api-p99-latency')).toMatchObject({
          Namespace: 'AWS/ApiGateway',
          MetricName: 'Latency',
          Dimensions: api,
          ExtendedStatistic: 'p99',
          Threshold: 10000,
        });
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

      it('notifies the alarm topic from every alarm', () => {
        expect(alarms()).toHaveLength(20);
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
    expect(output).toContain('Cannot resolve variable at "provider.environment.JWT_ISSUER"');
    expect(output).toContain('Cannot resolve variable at "provider.environment.PUBLIC_URL"');
    // The 401s name the public URL too: a stage cannot be packaged with challenges that point nowhere.
    expect(output).toContain('PublicApiGatewayResponseUnauthorized.Properties.ResponseParameters.gatewayresponse.header.WWW-Authenticate');
    expect(output).toContain('Value not found at "param" source');
  }, 120_000);
});

describe('Template: a stage that turns AWS WAF on (wafRateLimit)', () => {
  it('attaches a web ACL to the public stage that blocks a token past its rate, keyed on the Authorization header', () => {
    const require = createRequire(import.meta.url);
    const osls = join(dirname(require.resolve('osls/package.json')), 'bin', 'serverless.js');
    const out = mkdtempSync(join(tmpdir(), 'osls-waf-'));
    let waf: Json;
    try {
      const run = spawnSync(process.execPath, [osls, 'package', '--stage', 'example', '--param=wafRateLimit=2000', '--package', out], {
        cwd: ROOT,
        encoding: 'utf8',
        env: credentialFreeEnv(),
        timeout: 120_000,
      });
      if (run.status !== 0) throw new Error(`osls package failed:\n${run.stdout}${run.stderr}`);
      waf = JSON.parse(readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8')) as Json;
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
    const acl = waf.Resources.PublicApiWebAcl;

    expect(waf.Conditions.WafEnabled).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['2000', '0'] }] });
    expect(acl.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    expect(acl.Properties.Rules).toEqual([
      expect.objectContaining({
        Action: { Block: {} },
        Statement: {
          RateBasedStatement: {
            Limit: '2000',
            EvaluationWindowSec: 300,
            AggregateKeyType: 'CUSTOM_KEYS',
            CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
          },
        },
      }),
    ]);
    expect(waf.Resources.PublicApiWebAclAssociation).toMatchObject({
      DependsOn: ['PublicApiStage'],
      Properties: {
        ResourceArn: { 'Fn::Sub': 'arn:${AWS::Partition}:apigateway:${AWS::Region}::/restapis/${ApiGatewayRestApi}/stages/example' },
        WebACLArn: { 'Fn::GetAtt': ['PublicApiWebAcl', 'Arn'] },
      },
    });
    // What the web ACL blocks is answered in the contract's words: the WAF_FILTERED gateway response.
    expect(waf.Resources.PublicApiGatewayResponseWafFiltered.Properties).toMatchObject({ ResponseType: 'WAF_FILTERED', StatusCode: '429' });
  }, 120_000);
});
