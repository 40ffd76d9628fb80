import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { callerFromAuthorizer } from '../../lib/auth/caller.js';
import { bearerChallenge } from '../../lib/auth/challenge.js';
import { ForbiddenError, type UnauthorizedError } from '../../lib/errors.js';
import { eventFixture, setHeader } from '../helpers/events.js';

/**
 * The caller behind a public door, as the handlers read it from the token authorizer's context,
 * and the one 401 challenge every public door answers with.
 */

const cfg = { tenantClaim: 'tenant_id', scopeClaim: 'endpoint_groups', publicUrl: 'https://api.example.com' };
const NOW = 1_800_000_000;
const options = { cfg, now: () => NOW };

const event = (change: (e: APIGatewayProxyEvent) => void = () => undefined): APIGatewayProxyEvent =>
  eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
    e.requestContext.authorizer = { principalId: 'user-42', integrationLatency: 3, tenant: 'acme', sub: 'user-42', exp: String(NOW + 60) };
    change(e);
  });

function refusal(read: () => unknown): UnauthorizedError | ForbiddenError {
  try {
    read();
  } catch (error) {
    return error as UnauthorizedError;
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
        event((e) => (e.requestContext.authorizer!.exp = NOW + 1)),
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
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/agents", error="invalid_token", error_description="The bearer token has expired."',
    );
    expect(atMcp.headers['WWW-Authenticate']).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/mcp", error="invalid_token", error_description="The bearer token has expired."',
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

    expect(error).toBeInstanceOf(ForbiddenError);
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

describe('Function: bearerChallenge', () => {
  it('names the door’s RFC 9728 document, and nothing else when no token was refused (RFC 6750 §3.1)', () => {
    expect(bearerChallenge(cfg, 'mcp')).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/mcp"',
    );
    expect(bearerChallenge(cfg, 'inventory')).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/agents"',
    );
  });

  it('keeps a refusal that holds quotes, backslashes or non-ASCII a valid quoted-string', () => {
    const challenge = bearerChallenge(cfg, 'inventory', 'The bearer token\'s "iss" claim is not acceptable \\ é.');

    expect(challenge).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/api/agents", error="invalid_token", error_description="The bearer token\'s \'iss\' claim is not acceptable    ."',
    );
    expect(challenge.match(/error_description="([^"]*)"$/)?.[1]).not.toMatch(/[\\"]/);
  });
});
