import { describe, expect, it } from 'vitest';
import { type MockMethod, STATIC_ROUTES, staticAnswers } from '../../infra/static-answers.js';
import { answerMockIntegration } from '../../local/mock-integration.js';
import { staticRoutes as localStaticRoutes } from '../../local/template-routes.js';
import type { Json } from '../helpers/package.js';
import { fixtureGatewayAnswers } from '../helpers/sandbox.js';
import { EXAMPLE, ofType, resource, routesOfTemplate, template } from '../helpers/template.js';

/**
 * The public API's static answers in the packaged template: the RFC 9728 documents and the CORS
 * preflights are MOCK integrations of API Gateway (infra/static-answers.ts), made at package time
 * with the example stage's values, so no function (none in the VPC) runs for them. Each template
 * method is run here as API Gateway runs it (its request template, its integration response's
 * headers and Velocity template: local/mock-integration.ts, the local gateway's), and its
 * answer compared with what the MCP function answered for the route, header for header, byte for byte.
 */

const staticRoutes = () => routesOfTemplate().filter((r) => r.api === 'public' && r.mock);
const methodOf = (method: string, path: string): MockMethod => {
  const found = staticRoutes().find((r) => r.method === method && r.resource === path);
  if (!found) throw new Error(`no static ${method} ${path} in the template`);
  return resource(found.id).Properties as MockMethod;
};
/** The template's answer to a request, as API Gateway makes it (request id `req-1`). */
const ask = (method: string, path: string, headers: Record<string, string> = {}) =>
  answerMockIntegration(methodOf(method, path).Integration, { url: path, rawHeaders: Object.entries(headers).flat() }, 'req-1');

/** The headers the MCP function's CORS middleware (@middy/http-cors, lib/mcp/cors.ts) put on every answer. */
const CORS = {
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name',
  'Access-Control-Allow-Methods': 'POST',
  Vary: 'Origin',
  'Access-Control-Expose-Headers': 'WWW-Authenticate, Mcp-Protocol-Version',
  'Access-Control-Max-Age': '600',
};
const OWN_ORIGIN = new URL(EXAMPLE.publicUrl).origin;

describe('Template: the static answers of the public REST API (MOCK integrations, no function)', () => {
  it('answers each RFC 9728 document and each preflight with a MOCK integration, without an authorizer or an API key', async () => {
    const found = staticRoutes().map((r) => `${r.method} ${r.resource}`);

    expect(found.sort()).toEqual(STATIC_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(found).toHaveLength(7);
    for (const r of staticRoutes()) {
      const p = resource(r.id).Properties;
      expect(p).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false, Integration: { Type: 'MOCK' } });
      expect(p.Integration.Uri).toBeUndefined();
      expect(p.AuthorizerId).toBeUndefined();
    }
    // The local gateway serves the same routes the same way (local/template-routes.ts).
    expect(
      localStaticRoutes(await fixtureGatewayAnswers())
        .map((r) => `${r.method} ${r.resource}`)
        .sort(),
    ).toEqual(found.sort());
  });

  it('leaves the MCP function only its own door: no integration of it and no permission names a static route', () => {
    const mcpRoutes = routesOfTemplate().filter((r) => !r.mock && r.function === 'mcp');
    const permissions = ofType('AWS::Lambda::Permission').map(([, p]) => JSON.stringify(p.Properties.SourceArn ?? ''));

    expect(mcpRoutes.map((r) => `${r.method} ${r.resource}`).sort()).toEqual(['DELETE /api/mcp', 'GET /api/mcp', 'POST /api/mcp']);
    for (const arn of permissions) {
      expect(arn).not.toContain('well-known');
      expect(arn).not.toContain('OPTIONS');
    }
    expect(resource('McpLambdaFunction').Properties.Description).not.toMatch(/metadata/);
  });

  it.each([
    ['/.well-known/oauth-protected-resource/api/mcp', 'mcp'],
    ['/.well-known/oauth-protected-resource', 'mcp'],
    ['/.well-known/oauth-protected-resource/api/agents', 'inventory'],
  ] as const)('serves %s as the MCP function did: the %s document, byte for byte, kept an hour', (path, door) => {
    const answer = ask('GET', path);

    expect(answer.status).toBe(200);
    expect(answer.body).toBe(
      JSON.stringify({
        resource: door === 'mcp' ? EXAMPLE.mcpAudience : `${EXAMPLE.publicUrl}/api/agents`,
        authorization_servers: [EXAMPLE.issuer],
        scopes_supported: ['endpoints:read'],
        bearer_methods_supported: ['header'],
        resource_name: door === 'mcp' ? 'Endpoint read service (MCP)' : 'Endpoint read service (inventory)',
      }),
    );
    expect(answer.headers).toEqual({
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'public, max-age=3600',
      ...CORS,
    });
  });

  it("makes the documents readable by the service's own origin only, as lib/mcp/cors.ts admits it", () => {
    const own = ask('GET', '/.well-known/oauth-protected-resource/api/mcp', { Origin: OWN_ORIGIN });
    const foreign = ask('GET', '/.well-known/oauth-protected-resource/api/mcp', { Origin: 'https://evil.example' });
    const preflight = ask('OPTIONS', '/.well-known/oauth-protected-resource', { Origin: OWN_ORIGIN });

    expect(own.headers['Access-Control-Allow-Origin']).toBe(OWN_ORIGIN);
    expect(foreign.status).toBe(200);
    expect(foreign.headers['Access-Control-Allow-Origin']).toBeUndefined();
    expect(preflight).toEqual({
      status: 204,
      headers: { 'Cache-Control': 'no-store', ...CORS, 'Access-Control-Allow-Origin': OWN_ORIGIN, 'Content-Type': 'application/json' },
      body: '',
    });
  });

  it("answers the MCP door's preflight: Allow without an origin, the admitted origin named, any other origin the 403 failure", () => {
    const none = ask('OPTIONS', '/api/mcp');
    const admitted = ask('OPTIONS', '/api/mcp', { Origin: OWN_ORIGIN, 'Access-Control-Request-Method': 'POST' });
    const foreign = ask('OPTIONS', '/api/mcp', { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' });

    expect(none).toMatchObject({ status: 204, body: '', headers: { Allow: 'OPTIONS, POST', 'Cache-Control': 'no-store', ...CORS } });
    expect(none.headers['Access-Control-Allow-Origin']).toBeUndefined();
    expect(admitted).toMatchObject({ status: 204, body: '', headers: { 'Access-Control-Allow-Origin': OWN_ORIGIN, ...CORS } });
    expect(admitted.headers.Allow).toBeUndefined();
    expect(foreign).toEqual({
      status: 403,
      headers: { 'Cache-Control': 'no-store', ...CORS, 'Content-Type': 'text/plain; charset=utf-8' },
      body: 'Requests from this Origin are not allowed; set MCP_ALLOWED_ORIGINS to admit it. (request id: req-1)\n',
    });
  });

  it("is made from the MCP function's own configuration as the template gives it: the stage's values, nothing else", () => {
    const fromTemplate = Object.fromEntries(staticRoutes().map((r) => [`${r.method} ${r.resource}`, resource(r.id).Properties as Json]));
    const fromStage = staticAnswers({
      publicUrl: EXAMPLE.publicUrl,
      jwtIssuer: EXAMPLE.issuer,
      mcpAudience: EXAMPLE.mcpAudience,
      requiredScope: 'endpoints:read',
      mcpAllowedOrigins: [],
    });

    for (const { path, method } of fromStage) expect(fromTemplate[`${method.HttpMethod} ${path}`]).toMatchObject(method);
    // The deployment that publishes the stage waits for every static method.
    const deployment = ofType('AWS::ApiGateway::Deployment').find(([, d]) => d.Properties.RestApiId.Ref === 'ApiGatewayRestApi')![1];
    for (const r of staticRoutes()) expect(deployment.DependsOn).toContain(r.id);
    expect(JSON.stringify(template)).not.toContain('${param:');
  });
});
