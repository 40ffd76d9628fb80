import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { restRequest } from '../../functions/rest-event.js';
import { authorizerContextOf, callerFromAuthorizer as callerOf } from '../../lib/auth/caller.js';
import { bearerChallenge } from '../../lib/auth/challenge.js';
import { HttpError } from '../../lib/errors.js';
import { eventFixture, setHeader } from '../helpers/events.js';

/** The caller an event's authorizer context names, read as the handlers read it: from the event's request. */
const callerFromAuthorizer = (
  event: APIGatewayProxyEvent,
  ...rest: Parameters<typeof callerOf> extends [unknown, ...infer R] ? R : never
) => callerOf(restRequest(event), ...rest);

/**
 * The caller behind a public door, as the handlers read it from the token authorizer's context,
 * and the one 401 challenge every public door answers with.
 */

const cfg = {
  tenantClaim: 'tenant_id',
  scopeClaim: 'endpoint_groups',
  publicUrl: 'https://api.example.com',
  requiredScope: 'endpoints:read',
};
/** The clock the events' token expiries are set from: now, as the check reads it. */
const NOW = Math.floor(Date.now() / 1000);
const options = cfg;

const event = (change: (e: APIGatewayProxyEvent) => void = () => undefined): APIGatewayProxyEvent =>
  eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
    e.requestContext.authorizer = {
      principalId: 'user-42',
      integrationLatency: 3,
      tenant: 'acme',
      sub: 'user-42',
      exp: String(NOW + 60),
      grantedScopes: 'openid endpoints:read',
    };
    change(e);
  });

function refusal(read: () => unknown): HttpError {
  try {
    read();
  } catch (error) {
    return error as HttpError;
  }
  throw new Error('expected a refusal');
}

describe('Function: callerFromAuthorizer', () => {
  it('reads tenant and subject from the context API Gateway passes on (every value a string)', () => {
    expect(callerFromAuthorizer(event(), 'inventory', options)).toEqual({
      tenantId: 'acme',
      subject: 'user-42',
      expiresAt: NOW + 60,
      scope: { kind: 'unscoped' },
    });
  });

  it('accepts the expiry as a number too', () => {
    expect(
      callerFromAuthorizer(
        event((e) => (e.requestContext.authorizer!.exp = NOW + 60)),
        'mcp',
        options,
      ).tenantId,
    ).toBe('acme');
  });

  it('refuses with 401 a token whose exp has passed, as a cached authorizer answer may still carry it, with the challenge of the door asked', () => {
    const atInventory = refusal(() =>
      callerFromAuthorizer(
        event((e) => (e.requestContext.authorizer!.exp = String(NOW))),
        'inventory',
        options,
      ),
    );
    const atMcp = refusal(() =>
      callerFromAuthorizer(
        event((e) => (e.requestContext.authorizer!.exp = String(NOW - 3600))),
        'mcp',
        options,
      ),
    );

    expect([atInventory.statusCode, atInventory.message]).toEqual([401, 'The bearer token has expired.']);
    expect(atInventory.headers['WWW-Authenticate']).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/agents", scope="endpoints:read", error="invalid_token", error_description="The bearer token has expired."',
    );
    expect(atMcp.headers['WWW-Authenticate']).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/mcp", scope="endpoints:read", error="invalid_token", error_description="The bearer token has expired."',
    );
  });

  it('refuses with 401 a request whose Authorization header came twice: a cached answer judged one of them only', () => {
    const error = refusal(() =>
      callerFromAuthorizer(
        event((e) => (e.multiValueHeaders.Authorization = ['Bearer a', 'Bearer b'])),
        'mcp',
        options,
      ),
    );

    expect([error.statusCode, error.message]).toEqual([401, 'The Authorization header was sent more than once.']);
  });

  it('refuses with 401 a request that no authorizer judged (a route without one), never reading a tenant from elsewhere', () => {
    const error = refusal(() =>
      callerFromAuthorizer(
        event((e) => (e.requestContext.authorizer = null)),
        'inventory',
        options,
      ),
    );

    expect(error.statusCode).toBe(401);
    expect(error.headers['WWW-Authenticate']).toContain('error="invalid_token"');
  });

  it.each([
    ['empty', ''],
    ['blank', '  '],
  ])('refuses with 403 a verified token whose tenant is %s, never a default tenant', (_what, tenant) => {
    const error = refusal(() =>
      callerFromAuthorizer(
        event((e) => (e.requestContext.authorizer!.tenant = tenant)),
        'inventory',
        options,
      ),
    );

    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ name: 'ForbiddenError', statusCode: 403 });
    expect(error.message).toBe('The token carries no single tenant in its "tenant_id" claim.');
  });

  it('finds the Authorization header whatever its case', () => {
    const e = event();
    delete e.multiValueHeaders.Authorization;
    delete e.headers.Authorization;
    setHeader(e, 'authorization', 'Bearer x');
    e.multiValueHeaders.AUTHORIZATION = ['Bearer y'];

    expect(() => callerFromAuthorizer(e, 'inventory', options)).toThrow('The Authorization header was sent more than once.');
  });
});

describe("Function: callerFromAuthorizer (the door's OAuth scope)", () => {
  it.each([
    ['no scope at all', undefined],
    ['an empty scope', ''],
    ['another scope', 'openid offline_access endpoints:write'],
    ['a scope that only begins like it', 'endpoints:readonly'],
  ])('refuses a valid token with %s: 403 insufficient_scope naming the scope, at either door', (_what, granted) => {
    const e = event((ev) => {
      if (granted === undefined) delete (ev.requestContext.authorizer as Record<string, unknown>).grantedScopes;
      else ev.requestContext.authorizer!.grantedScopes = granted;
    });

    for (const door of ['inventory', 'mcp'] as const) {
      const error = refusal(() => callerFromAuthorizer(e, door, options));
      expect(error.statusCode).toBe(403);
      expect(error.message).toBe(
        'The bearer token was not granted the scope "endpoints:read" that this door requires: sign in again, asking for it.',
      );
      expect(error.headers['WWW-Authenticate']).toBe(
        `Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/${door === 'mcp' ? 'api/mcp' : 'api/agents'}", error="insufficient_scope", scope="endpoints:read", error_description="The token lacks the scope endpoints:read."`,
      );
    }
  });

  it.each([
    ['`scope`, space-separated (RFC 9068)', { scope: 'openid endpoints:read' }, undefined],
    ['`scp` as a string (Entra ID)', { scp: 'endpoints:read' }, undefined],
    ['`scp` as an array', { scp: ['profile', 'endpoints:read'] }, undefined],
    ['the claim SCOPE_CLAIM names', { permissions: ['endpoints:read'], scope: 'other' }, 'permissions'],
  ])('lets a token through that grants the scope in %s', (_where, claims, claim) => {
    const context = authorizerContextOf({ tenant_id: 'acme', sub: 'u', exp: NOW + 60, ...claims }, 'tenant_id', 'endpoint_groups', claim);
    const e = event((ev) => {
      ev.requestContext.authorizer = { principalId: 'u', ...Object.fromEntries(Object.entries(context).map(([k, v]) => [k, String(v)])) };
    });

    expect(callerFromAuthorizer(e, 'mcp', options).subject).toBe('u');
  });

  it.each([
    ['an empty `scope` and no `scp`', { scope: '' }],
    ['`scp` of another shape', { scp: { read: true } }],
    ['the scope under another claim than SCOPE_CLAIM', { scope: 'endpoints:read', scopeClaim: 'permissions' }],
    ['`scope` separated by a tab', { scope: 'openid\tendpoints:read' }],
    ['`scope` separated by a no-break space', { scope: 'openid\u00a0endpoints:read' }],
    ['`scope` as a JSON array', { scope: ['openid', 'endpoints:read'] }],
    ['an `scp` entry holding a space', { scp: ['profile endpoints:read'] }],
  ])('refuses a token with %s', (_what, { scopeClaim, ...claims }: Record<string, unknown>) => {
    const context = authorizerContextOf(
      { tenant_id: 'acme', sub: 'u', exp: NOW + 60, ...claims },
      'tenant_id',
      'endpoint_groups',
      scopeClaim as string | undefined,
    );
    const e = event((ev) => {
      ev.requestContext.authorizer = { principalId: 'u', ...Object.fromEntries(Object.entries(context).map(([k, v]) => [k, String(v)])) };
    });

    expect(refusal(() => callerFromAuthorizer(e, 'inventory', options)).statusCode).toBe(403);
  });

  it('asks no scope when REQUIRED_SCOPE is empty', () => {
    const e = event((ev) => {
      ev.requestContext.authorizer!.grantedScopes = '';
    });

    expect(callerFromAuthorizer(e, 'mcp', { ...cfg, requiredScope: undefined }).tenantId).toBe('acme');
  });
});

describe('Function: bearerChallenge', () => {
  it('names the door’s RFC 9728 document, and nothing else when no token was refused (RFC 6750 §3.1)', () => {
    expect(bearerChallenge(cfg, 'mcp')).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/mcp", scope="endpoints:read"',
    );
    expect(bearerChallenge(cfg, 'inventory')).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/agents", scope="endpoints:read"',
    );
    expect(bearerChallenge({ ...cfg, requiredScope: undefined }, 'mcp')).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/mcp"',
    );
  });

  it('keeps a refusal that holds quotes, backslashes or non-ASCII a valid quoted-string', () => {
    const challenge = bearerChallenge(cfg, 'inventory', 'The bearer token\'s "iss" claim is not acceptable \\ é.');

    expect(challenge).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/agents", scope="endpoints:read", error="invalid_token", error_description="The bearer token\'s \'iss\' claim is not acceptable    ."',
    );
    expect(challenge.match(/error_description="([^"]*)"$/)?.[1]).not.toMatch(/[\\"]/);
  });
});
