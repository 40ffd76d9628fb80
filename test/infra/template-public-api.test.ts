import { describe, expect, it } from 'vitest';
import { GATEWAY_RESPONSES, gatewayResponseResources } from '../../infra/gateway-responses.js';
import { ROUTES, type Route } from '../../infra/local/template-routes.js';
import { DOORS } from '../../lib/auth/public-doors.js';
import { ACCOUNT, decide, REGION, resolveIntrinsics } from '../helpers/iam.js';
import type { Json } from '../helpers/package.js';
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

  it('has exactly the routes of the local gateway (infra/local/template-routes.ts): methods, functions or static answers, authorizers, API keys and transfer modes', () => {
    const line = (r: Route): string =>
      `${r.api} ${r.method} ${r.resource} -> ${r.mock ? 'MOCK' : r.function} [${r.authorizer ? JSON.stringify(r.authorizer) : 'none'}, ${r.apiKeyRequired ? 'API key' : 'no key'}, ${r.mock ? '' : r.transferMode}]`;
    const local = ROUTES.map(line).sort();
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

  it('lets the public API invoke the authorizer function, and no other API or service (its permissions judged by iam-simulate)', async () => {
    const all = template.Resources as Json;
    const functionArn = resolveIntrinsics({ 'Fn::GetAtt': ['AuthorizerLambdaFunction', 'Arn'] }, all) as string;
    // The function's resource policy, as Lambda makes it from the template's permissions.
    const statements = ofType('AWS::Lambda::Permission')
      .map(([, p]) => resolveIntrinsics(p.Properties, all) as Json)
      .filter((p) => p.FunctionName === functionArn)
      .map((p) => ({
        Effect: 'Allow',
        Principal: { Service: p.Principal },
        Action: p.Action,
        Resource: functionArn,
        ...(p.SourceArn ? { Condition: { ArnLike: { 'aws:SourceArn': p.SourceArn } } } : {}),
      }));
    const publicApi = resolveIntrinsics({ Ref: 'ApiGatewayRestApi' }, all) as string;
    const invokedBy = (service: string, api: string) =>
      decide({
        principal: service,
        action: 'lambda:InvokeFunction',
        resource: functionArn,
        context: { 'aws:SourceArn': `arn:aws:execute-api:${REGION}:${ACCOUNT}:${api}/authorizers/abc123` },
        identityPolicies: [],
        resourcePolicy: { Version: '2012-10-17', Statement: statements },
      });

    expect(await invokedBy('apigateway.amazonaws.com', publicApi)).toBe('Allowed');
    expect(await invokedBy('apigateway.amazonaws.com', 'another-api')).not.toBe('Allowed');
    expect(await invokedBy('events.amazonaws.com', publicApi)).not.toBe('Allowed');
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
      TimeoutInMillis: 240000,
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

  it('emits no web ACL unless the stage asks for one (wafRateLimit), and no condition the stage has already decided', () => {
    expect(resources().filter(([, r]) => String(r.Type).startsWith('AWS::WAFv2::'))).toEqual([]);
    expect(template.Conditions).toBeUndefined();
    expect(resources().filter(([, r]) => r.Condition !== undefined)).toEqual([]);
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
