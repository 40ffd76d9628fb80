import type { JWTPayload } from 'jose';
import type { Settings } from '../config.js';
import { httpError } from '../errors.js';
import { headerValues, type RestRequest } from '../rest-request.js';
import { insufficientScope, refusedAtDoor } from './challenge.js';
import { badScopeClaimSentence, type EndpointScope, readScopeClaim, scopeContextValue, scopeFromContextValue } from './endpoint-scope.js';
import { type CallerIdentity, identityFromClaims } from './identity.js';
import type { DoorName } from './public-doors.js';
import { grantedScopes } from './scopes.js';

/**
 * What the token authorizer hands to the handlers behind a public door, in its answer's `context`
 * (API Gateway allows strings, numbers and booleans there, and passes them on as strings in
 * `event.requestContext.authorizer`): the tenant (empty when the token names no single one), the
 * subject, the token's expiry, which the handler checks again because API Gateway may serve a
 * cached answer after the token expired, and the endpoint scope when the token carries the scope
 * claim (its string form, lib/auth/endpoint-scope.ts scopeContextValue; `invalid` for a bad claim,
 * which the handler refuses as it refuses a missing tenant), and the OAuth scopes the token was
 * granted, space-separated (lib/auth/scopes.ts), which the handler checks against the door's. Both
 * come from the token alone, so an answer cached for that token carries the right ones.
 */
export interface AuthorizerContext {
  tenant: string;
  sub: string;
  exp: number;
  scope?: string;
  grantedScopes: string;
  [key: string]: string | number | boolean | undefined;
}

/** The context of an allowed token, from its verified claims. */
export function authorizerContextOf(
  claims: JWTPayload,
  tenantClaim: string,
  scopeClaim: string,
  oauthScopeClaim?: string,
): AuthorizerContext {
  let tenant = '';
  try {
    tenant = identityFromClaims(claims as Record<string, unknown>, tenantClaim).tenantId;
  } catch {
    // No single tenant: the handler refuses with 403, never a default tenant (DESIGN §5).
  }
  const context: AuthorizerContext = {
    tenant,
    sub: typeof claims.sub === 'string' ? claims.sub : '',
    exp: Number(claims.exp),
    grantedScopes: grantedScopes(claims as Record<string, unknown>, oauthScopeClaim).join(' '),
  };
  const scope = scopeContextValue(readScopeClaim((claims as Record<string, unknown>)[scopeClaim]));
  if (scope !== undefined) context.scope = scope;
  return context;
}

/**
 * The caller of a request behind a public door's authorizer, read from the authorizer's context
 * (payload 1.0: `requestContext.authorizer`). Invariants: a request with no verified caller,
 * with an `Authorization` header sent more than once, or whose token's `exp` has passed (an answer
 * API Gateway served from its cache) is a 401 with the door's challenge; a verified token without
 * the door's OAuth scope is a 403 `insufficient_scope` naming it; a verified token without a
 * single tenant is a 403, never a default tenant, and so is a bad scope claim (naming the claim).
 * The tenant and the scope come from nowhere else. `expiresAt` is the token's `exp` (epoch
 * seconds): what the MCP door caps its exchanged tokens by.
 */
export function callerFromAuthorizer(
  request: Pick<RestRequest, 'headers' | 'authorizer'>,
  door: DoorName,
  cfg: Pick<Settings, 'tenantClaim' | 'scopeClaim' | 'publicUrl' | 'requiredScope'>,
): CallerIdentity & { expiresAt: number; scope: EndpointScope } {
  const authorizations = headerValues(request, 'authorization');
  // A cached answer is found by one header value; the others were never checked.
  if (authorizations.length > 1) throw refusedAtDoor(cfg, door, 'The Authorization header was sent more than once.', true);
  const context = request.authorizer;
  const exp = Number(context?.exp);
  if (context === null || !Number.isFinite(exp)) {
    throw refusedAtDoor(cfg, door, 'A bearer token checked by the token authorizer is required.', authorizations.length > 0);
  }
  if (exp <= Math.floor(Date.now() / 1000)) throw refusedAtDoor(cfg, door, 'The bearer token has expired.', true);
  const granted = typeof context.grantedScopes === 'string' ? context.grantedScopes.split(' ') : [];
  if (cfg.requiredScope !== undefined && !granted.includes(cfg.requiredScope)) throw insufficientScope({ cfg, door }, cfg.requiredScope);
  const identity = identityFromClaims({ [cfg.tenantClaim]: context.tenant, sub: context.sub }, cfg.tenantClaim);
  const scope = scopeFromContextValue(context.scope);
  if (scope === 'invalid') throw httpError(403, badScopeClaimSentence(cfg.scopeClaim));
  return { ...identity, expiresAt: exp, scope };
}
