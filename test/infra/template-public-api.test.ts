import { describe, expect, it } from 'vitest';
import { GATEWAY_RESPONSES, gatewayResponseResources } from '../../infra/gateway-responses.js';
import { DOORS } from '../../lib/auth/public-doors.js';
import { ROUTES, type Route, staticRoutes } from '../../local/template-routes.js';
import { ACCOUNT, decide, REGION, resolveIntrinsics } from '../helpers/iam.js';
import type { Json } from '../helpers/package.js';
import { fixtureGatewayAnswers } from '../helpers/sandbox.js';
import { asList, EXAMPLE, getAtt, ofType, resource, resources, routesOfTemplate, template } from '../helpers/template.js';

/** The public REST API of the packaged template: the doors, their authorizers, the stage and its gateway responses. */

describe('Template: the public REST API (inventory and the MCP door)', () => {
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

  it('has exactly the routes of the local gateway (local/template-routes.ts): methods, functions or static answers, authorizers, API keys and transfer modes', async () => {
    const line = (r: Route): string =>
      `${r.api} ${r.method} ${r.resource} -> ${r.mock ? 'MOCK' : r.function} [${r.authorizer ? JSON.stringify(r.authorizer) : 'none'}, ${r.apiKeyRequired ? 'API key' : 'no key'}, ${r.mock ? '' : r.transferMode}]`;
    const local = [...ROUTES, ...staticRoutes(await fixtureGatewayAnswers())].map(line).sort();
    const deployed = routesOfTemplate().map(line).sort();

    expect(deployed).toEqual(local);
  });

  it('guards each door with its own REQUEST authorizer, both the authorizer function, cached as lib/auth/public-doors.ts says', () => {
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

  describe("Lambda's permissions (each function's resource policy judged by iam-simulate)", () => {
    const all = template.Resources as Json;
    const functionArn = (id: string): string => resolveIntrinsics({ 'Fn::GetAtt': [id, 'Arn'] }, all) as string;
    /** A function's resource policy as Lambda makes it from the template's permissions (a SourceArn is matched with ArnLike). */
    const policyOf = (fn: string, permissions = ofType('AWS::Lambda::Permission').map(([, p]) => p.Properties as Json)): Json => ({
      Version: '2012-10-17',
      Statement: permissions
        .map((p) => resolveIntrinsics(p, all) as Json)
        .filter((p) => p.FunctionName === functionArn(fn))
        .map((p) => ({
          Effect: 'Allow',
          Principal: { Service: p.Principal },
          Action: p.Action,
          Resource: functionArn(fn),
          ...(p.SourceArn ? { Condition: { ArnLike: { 'aws:SourceArn': p.SourceArn } } } : {}),
        })),
    });
    const invoke = (fn: string, sourceArn: string, policy = policyOf(fn), service = 'apigateway.amazonaws.com') =>
      decide({
        principal: service,
        action: 'lambda:InvokeFunction',
        resource: functionArn(fn),
        context: { 'aws:SourceArn': sourceArn },
        identityPolicies: [],
        resourcePolicy: policy,
      });
    const api = (route: { api: string }): string =>
      resolveIntrinsics({ Ref: route.api === 'private' ? 'PrivateApi' : 'ApiGatewayRestApi' }, all) as string;
    const methodArn = (apiId: string, stage: string, method: string, path: string): string =>
      `arn:aws:execute-api:${REGION}:${ACCOUNT}:${apiId}/${stage}/${method}${path}`;
    const FUNCTION_IDS = {
      inventory: 'InventoryLambdaFunction',
      mcp: 'McpLambdaFunction',
      observations: 'ObservationsLambdaFunction',
    } as const;

    it('let API Gateway invoke each function only from its own methods of this stage: no other stage, method, path, API or service', async () => {
      // A MOCK method invokes no function: every function is judged from it below as from any other path.
      const routes = routesOfTemplate().filter((route) => !route.mock);
      const mockRoutes = routesOfTemplate().filter((route) => route.mock);
      const wrong: string[] = [];
      for (const route of routes) {
        for (const [name, fn] of Object.entries(FUNCTION_IDS)) {
          const own = route.function === name;
          const decision = await invoke(fn, methodArn(api(route), 'example', route.method, route.resource));
          if ((decision === 'Allowed') !== own) wrong.push(`${name} from ${route.method} ${route.resource}: ${decision}`);
        }
        const fn = FUNCTION_IDS[route.function];
        for (const [what, arn] of [
          ['another stage', methodArn(api(route), 'prod', route.method, route.resource)],
          ['another method', methodArn(api(route), 'example', route.method === 'PATCH' ? 'PUT' : 'PATCH', route.resource)],
          ['a path below', methodArn(api(route), 'example', route.method, `${route.resource}/more`)],
          ['another API', methodArn('a1b2c3d4e5', 'example', route.method, route.resource)],
        ] as const) {
          if ((await invoke(fn, arn)) === 'Allowed') wrong.push(`${route.function} from ${what} (${arn})`);
        }
        if (
          (await invoke(fn, methodArn(api(route), 'example', route.method, route.resource), undefined, 'events.amazonaws.com')) ===
          'Allowed'
        )
          wrong.push(`${route.function} by another service`);
      }
      for (const route of mockRoutes) {
        for (const [name, fn] of Object.entries(FUNCTION_IDS)) {
          if ((await invoke(fn, methodArn(api(route), 'example', route.method, route.resource))) === 'Allowed')
            wrong.push(`${name} from the MOCK method ${route.method} ${route.resource}`);
        }
      }
      expect(mockRoutes.length).toBeGreaterThan(0);
      expect(wrong).toEqual([]);
    });

    it('let the public API invoke the authorizer function as its two token authorizers only, never as a method', async () => {
      const publicApi = resolveIntrinsics({ Ref: 'ApiGatewayRestApi' }, all) as string;
      const authorizerIds = ofType('AWS::ApiGateway::Authorizer').map(([id]) => resolveIntrinsics({ Ref: id }, all) as string);
      const authorizerArn = (apiId: string, id: string) => `arn:aws:execute-api:${REGION}:${ACCOUNT}:${apiId}/authorizers/${id}`;

      expect(authorizerIds).toHaveLength(2);
      for (const id of authorizerIds) {
        expect(await invoke('AuthorizerLambdaFunction', authorizerArn(publicApi, id)), id).toBe('Allowed');
        expect(await invoke('AuthorizerLambdaFunction', authorizerArn('another-api', id)), id).not.toBe('Allowed');
        expect(await invoke('AuthorizerLambdaFunction', authorizerArn(publicApi, id), undefined, 'events.amazonaws.com')).not.toBe(
          'Allowed',
        );
      }
      expect(await invoke('AuthorizerLambdaFunction', authorizerArn(publicApi, 'abc123'))).not.toBe('Allowed');
      expect(await invoke('AuthorizerLambdaFunction', methodArn(publicApi, 'example', 'GET', '/api/agents'))).not.toBe('Allowed');
    });

    it("is narrower than osls's own permissions, which the evaluator shows would admit any stage and method", async () => {
      const publicApi = resolveIntrinsics({ Ref: 'ApiGatewayRestApi' }, all) as string;
      // osls's permission for a function of the public API: the API's every stage, method and path.
      const osls = [
        {
          FunctionName: { 'Fn::GetAtt': ['InventoryLambdaFunction', 'Arn'] },
          Action: 'lambda:InvokeFunction',
          Principal: 'apigateway.amazonaws.com',
          SourceArn: { 'Fn::Sub': 'arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${ApiGatewayRestApi}/*/*' },
        },
      ];
      const elsewhere = methodArn(publicApi, 'prod', 'DELETE', '/api/mcp');

      expect(await invoke('InventoryLambdaFunction', elsewhere, policyOf('InventoryLambdaFunction', osls))).toBe('Allowed');
      expect(await invoke('InventoryLambdaFunction', elsewhere)).not.toBe('Allowed');
      // One permission per method that invokes a function (a MOCK method invokes none), and one per authorizer: none left from osls.
      expect(ofType('AWS::Lambda::Permission')).toHaveLength(routesOfTemplate().filter((route) => !route.mock).length + 2);
    });

    it('keeps the authorizer function outside the VPC, with its own audience for the MCP door', () => {
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
    for (const [, method] of publicMethods().filter(
      ([, m]) => m !== resource('ApiGatewayMethodApiAgentsGet') && m.Properties.Integration.Type !== 'MOCK',
    )) {
      expect(method.Properties.Integration.ResponseTransferMode).toBeUndefined();
      expect(method.Properties.Integration.Uri['Fn::Join'][1]).toContain('/invocations');
    }
  });

  it('answers the RFC 9728 documents and the CORS preflights without any authorizer, and nothing else', () => {
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

    expect(responses).toEqual(gatewayResponseResources(EXAMPLE.publicUrl, 'https://no-browser-origin.invalid', 'endpoints:read'));
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

  it('gives its 401s no RFC 6750 error code, as API Gateway allows: static header values, one per type, which a missing token and a refused one reach alike', () => {
    const responses = ofType('AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties);

    // Every header is a literal (a quoted value): no mapping of the authorizer's context, which AWS documents for bodies only.
    for (const { ResponseParameters } of responses)
      for (const value of Object.values(ResponseParameters as Record<string, string>)) expect(value).toMatch(/^'[^']*'$/);
    // UNAUTHORIZED answers a call without a token (API Gateway, before the authorizer) and a refused one at the MCP door;
    // ACCESS_DENIED both at the inventory door: neither can say error="invalid_token" for the second alone.
    const challenges = responses
      .filter((r) => r.StatusCode === '401')
      .map((r) => r.ResponseParameters['gatewayresponse.header.WWW-Authenticate']);
    expect(challenges).toHaveLength(2);
    for (const challenge of challenges) expect(challenge).not.toMatch(/error=/);
  });

  it('points each 401 at the RFC 9728 document of the door whose refusals it answers', () => {
    const headersOf = (type: string): Json =>
      ofType('AWS::ApiGateway::GatewayResponse').find(([, r]) => r.Properties.ResponseType === type)![1].Properties;

    expect(headersOf('UNAUTHORIZED')).toMatchObject({
      StatusCode: '401',
      ResponseParameters: {
        'gatewayresponse.header.WWW-Authenticate': `'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/mcp", scope="endpoints:read"'`,
      },
    });
    expect(headersOf('ACCESS_DENIED')).toMatchObject({
      StatusCode: '401',
      ResponseParameters: {
        'gatewayresponse.header.WWW-Authenticate': `'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/agents", scope="endpoints:read"'`,
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
    const logs = stage.AccessLogSetting as Json;
    expect(logs.DestinationArn).toEqual(getAtt('PublicApiAccessLogGroup'));
    expect(JSON.parse(logs.Format as string)).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      authorizerError: '$context.authorizer.error',
      gatewayResponse: '$context.error.responseType',
    });
  });

  describe('AWS WAF (on unless the stage turns it off)', () => {
    const acl = (): Json => resource('PublicApiWebAcl').Properties;
    const rule = (name: string): Json => (acl().Rules as Json[]).find((r) => r.Name === name)!;

    it('guards the public stage, allowing by default and blocking through the WAF_FILTERED gateway response', () => {
      expect(acl()).toMatchObject({ Name: 'endpoint-read-service-example-public', Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
      expect(resource('PublicApiWebAclAssociation')).toMatchObject({
        DependsOn: ['PublicApiStage'],
        Properties: {
          ResourceArn: { 'Fn::Sub': 'arn:${AWS::Partition}:apigateway:${AWS::Region}::/restapis/${ApiGatewayRestApi}/stages/example' },
          WebACLArn: getAtt('PublicApiWebAcl'),
        },
      });
      expect(resource('PublicApiGatewayResponseWafFiltered').Properties).toMatchObject({ ResponseType: 'WAF_FILTERED', StatusCode: '429' });
      expect(template.Conditions).toBeUndefined();
      expect(resources().filter(([, r]) => r.Condition !== undefined)).toEqual([]);
    });

    it('counts every request per source IP first (a missing or made-up token included), then per token, then applies AWS managed rules', () => {
      expect((acl().Rules as Json[]).map((r) => [r.Priority, r.Name])).toEqual([
        [0, 'requests-per-ip'],
        [1, 'requests-per-token'],
        [2, 'aws-ip-reputation'],
        [3, 'aws-known-bad-inputs'],
        [4, 'aws-common'],
      ]);
      expect(rule('requests-per-ip')).toMatchObject({
        Action: { Block: {} },
        Statement: { RateBasedStatement: { Limit: 3000, EvaluationWindowSec: 300, AggregateKeyType: 'IP' } },
      });
      expect(rule('requests-per-token')).toMatchObject({
        Action: { Block: {} },
        Statement: {
          RateBasedStatement: {
            Limit: 1500,
            EvaluationWindowSec: 300,
            AggregateKeyType: 'CUSTOM_KEYS',
            CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
          },
        },
      });
    });

    it("uses AWS's IP reputation list, known bad inputs and the core rule set, whose body-size and body-XSS rules only count", () => {
      const managed = (name: string): Json => rule(name).Statement.ManagedRuleGroupStatement;

      for (const name of ['aws-ip-reputation', 'aws-known-bad-inputs', 'aws-common']) {
        expect(rule(name).OverrideAction, name).toEqual({ None: {} });
        expect(managed(name).VendorName, name).toBe('AWS');
      }
      expect(managed('aws-ip-reputation').Name).toBe('AWSManagedRulesAmazonIpReputationList');
      expect(managed('aws-known-bad-inputs').Name).toBe('AWSManagedRulesKnownBadInputsRuleSet');
      expect(managed('aws-common')).toMatchObject({
        Name: 'AWSManagedRulesCommonRuleSet',
        RuleActionOverrides: [
          { Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } },
          { Name: 'CrossSiteScripting_BODY', ActionToUse: { Count: {} } },
        ],
      });
      for (const r of acl().Rules as Json[])
        expect(r.VisibilityConfig, r.Name).toMatchObject({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true });
    });

    it('logs what it blocks or counts, without the token, to an aws-waf-logs- group kept logRetentionDays', () => {
      expect(resource('PublicApiWafLogGroup').Properties).toEqual({
        LogGroupName: 'aws-waf-logs-endpoint-read-service-example-public',
        RetentionInDays: 30,
      });
      expect(resource('PublicApiWebAclLogging').Properties).toEqual({
        ResourceArn: getAtt('PublicApiWebAcl'),
        LogDestinationConfigs: [
          { 'Fn::Sub': 'arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:${PublicApiWafLogGroup}' },
        ],
        RedactedFields: [{ SingleHeader: { Name: 'authorization' } }],
        LoggingFilter: {
          DefaultBehavior: 'DROP',
          Filters: [
            {
              Behavior: 'KEEP',
              Requirement: 'MEETS_ANY',
              Conditions: [{ ActionCondition: { Action: 'BLOCK' } }, { ActionCondition: { Action: 'COUNT' } }],
            },
          ],
        },
      });
    });
  });

  it('runs the MCP function in the VPC, calling the private API by its name and reading its client secret by ARN only', () => {
    const fn = resource('McpLambdaFunction').Properties;

    expect(fn.VpcConfig).toEqual({
      SubnetIds: { 'Fn::Split': [',', EXAMPLE.subnets] },
      SecurityGroupIds: { 'Fn::Split': [',', EXAMPLE.securityGroups] },
    });
    expect(fn.Environment.Variables).toMatchObject({
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
