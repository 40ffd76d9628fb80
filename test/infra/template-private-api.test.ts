import { describe, expect, it } from 'vitest';
import { ACCOUNT, decide, REGION } from '../helpers/iam.js';
import type { Json } from '../helpers/package.js';
import { asList, EXAMPLE, ofType, resource, routesOfTemplate } from '../helpers/template.js';

/** The private REST API of the packaged template, in front of the observations function. */

describe('Template: the private REST API (observations)', () => {
  it('is private, bound to the execute-api VPC endpoint', () => {
    expect(resource('PrivateApi').Properties.EndpointConfiguration).toEqual({ Types: ['PRIVATE'], VpcEndpointIds: [EXAMPLE.vpce] });
  });

  it("admits through its resource policy the one method the broker calls, only through the broker's VPC endpoint (judged by iam-simulate)", async () => {
    const api = resource('PrivateApi').Properties;
    const [brokerEndpoint] = api.EndpointConfiguration.VpcEndpointIds as string[];
    const stage = resource('PrivateApiStage').Properties.StageName as string;
    const [route] = routesOfTemplate().filter((r) => r.api === 'private');
    // API Gateway reads `execute-api:/` in its resource policy as this API's own ARN.
    const apiArn = `arn:aws:execute-api:${REGION}:${ACCOUNT}:a1b2c3d4e5`;
    const policy = JSON.parse(JSON.stringify(api.Policy).replaceAll('"execute-api:/', `"${apiArn}/`)) as Json;
    /** The broker (its own account's role, allowed to invoke anything) calling `method path` from `vpce`. */
    const invoke = (method: string, path: string, vpce: string | undefined) =>
      decide({
        principal: `arn:aws:sts::210987654321:assumed-role/mcp-broker/session`,
        action: 'execute-api:Invoke',
        resource: `${apiArn}/${stage}/${method}${path}`,
        context: vpce === undefined ? {} : { 'aws:SourceVpce': vpce },
        identityPolicies: [
          {
            name: 'invoke-anything',
            policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: '*' }] },
          },
        ],
        resourcePolicy: policy,
      });

    expect(await invoke(route!.method, route!.resource, brokerEndpoint)).toBe('Allowed');
    expect(await invoke(route!.method, route!.resource, 'vpce-0aaaaaaaaaaaaaaaa')).toBe('ExplicitlyDenied');
    expect(await invoke(route!.method, route!.resource, undefined)).toBe('ExplicitlyDenied');
    for (const [method, path] of [
      ['POST', route!.resource],
      ['GET', '/api/agents'],
      ['GET', '/api/mcp'],
    ]) {
      expect(await invoke(method!, path!, brokerEndpoint), `${method} ${path}`).not.toBe('Allowed');
    }
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
        .filter((r) => !r.mock && r.function === 'observations')
        .map((r) => r.api),
    ).toEqual(['private']);
  });
});
