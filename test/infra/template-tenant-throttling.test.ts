import { describe, expect, it } from 'vitest';
import { tenantUsageKey } from '../../lib/auth/usage-key.js';
import { TENANT_THROTTLE } from '../../local/template-routes.js';
import { ofType, resource, routesOfTemplate, template } from '../helpers/template.js';

/**
 * Per-tenant throttling in the packaged template: the public API takes its API keys from the token
 * authorizer, the doors' methods take one, and the tenants' usage plan gives each key (each
 * tenant) its own rate and burst on the public stage; the key of tokens that name no tenant is in
 * the plan, so those reach the handler's own 403.
 */
describe('Template: per-tenant throttling on the public REST API', () => {
  it('takes API keys from the authorizer, and asks one on every door method and on no static answer', () => {
    const publicRoutes = routesOfTemplate().filter((r) => r.api === 'public');

    expect(resource('ApiGatewayRestApi').Properties.ApiKeySourceType).toBe('AUTHORIZER');
    expect(
      publicRoutes
        .filter((r) => r.apiKeyRequired)
        .map((r) => `${r.method} ${r.resource}`)
        .sort(),
    ).toEqual(['DELETE /api/mcp', 'GET /api/agents', 'GET /api/mcp', 'POST /api/mcp']);
    // Only a method behind an authorizer can be given a key: a static answer with one would be refused to everyone.
    for (const r of publicRoutes) expect(r.apiKeyRequired).toBe(r.authorizer !== null);
  });

  it("gives every tenant the default plan's own rate and burst on the public stage (tenantRateLimit, tenantBurstLimit)", () => {
    const plans = ofType('AWS::ApiGateway::UsagePlan');

    expect(plans.map(([id]) => id)).toEqual(['TenantUsagePlan']);
    expect(resource('TenantUsagePlan').Properties).toMatchObject({
      UsagePlanName: 'endpoint-read-service-example-tenants',
      ApiStages: [{ ApiId: { Ref: 'ApiGatewayRestApi' }, Stage: { Ref: 'PublicApiStage' } }],
      Throttle: { RateLimit: 10, BurstLimit: 20 },
    });
    expect(resource('TenantUsagePlan').Properties.Quota).toBeUndefined();
    // The local gateway throttles each tenant with the same numbers.
    expect(TENANT_THROTTLE).toEqual({ rateLimit: 10, burstLimit: 20 });
    expect((template.Outputs as Record<string, { Value: unknown }>).TenantUsagePlanId?.Value).toEqual({ Ref: 'TenantUsagePlan' });
  });

  it('puts the key of tokens that name no tenant in the plan, with the value the authorizer names for them at this stage', () => {
    expect(resource('NoTenantUsageKey').Properties).toEqual({
      Name: 'endpoint-read-service-example-no-tenant',
      Description: expect.any(String),
      Enabled: true,
      Value: tenantUsageKey('example', ''),
    });
    expect(resource('NoTenantUsagePlanKey').Properties).toEqual({
      KeyId: { Ref: 'NoTenantUsageKey' },
      KeyType: 'API_KEY',
      UsagePlanId: { Ref: 'TenantUsagePlan' },
    });
    // No tenant's own key is in the template: each is made when the tenant is set up (npm run tenant-key).
    expect(ofType('AWS::ApiGateway::ApiKey').map(([id]) => id)).toEqual(['NoTenantUsageKey']);
  });

  it('answers a tenant without a key in the plan with a 403 in the contract’s words (INVALID_API_KEY)', () => {
    const [, response] = ofType('AWS::ApiGateway::GatewayResponse').find(([, r]) => r.Properties.ResponseType === 'INVALID_API_KEY')!;

    expect(response.Properties.StatusCode).toBe('403');
    expect(response.Properties.ResponseTemplates['text/plain']).toMatch(/^Requests for this tenant are not accepted yet/);
  });
});
