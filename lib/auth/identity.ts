import { ForbiddenError, UnauthorizedError } from '../errors.js';

/** Who is calling: the tenant comes only from the verified token, never from the request. */
export interface CallerIdentity {
  tenantId: string;
  subject: string;
}

/**
 * An API Gateway HTTP API JWT authorizer turns every claim into a string: numbers as digits and
 * arrays as "[a b]". A tenant claim that is missing, empty or such an array names no single
 * tenant and is refused (403), never defaulted.
 */
export function identityFromAuthorizerClaims(
  claims: Record<string, string | number | boolean | string[]> | undefined,
  tenantClaim: string,
): CallerIdentity {
  if (!claims) throw new UnauthorizedError('A bearer token is required.');
  const tenant = claims[tenantClaim];
  if (typeof tenant !== 'string' || tenant.trim() === '' || /^\[.*\]$/.test(tenant)) {
    throw new ForbiddenError(`The token carries no single tenant in its "${tenantClaim}" claim.`);
  }
  const sub = claims.sub;
  return { tenantId: tenant, subject: typeof sub === 'string' && sub !== '' ? sub : 'unknown' };
}

/** The same rule over verified JWT claims as they come out of the token (observations path). */
export function identityFromVerifiedClaims(claims: Record<string, unknown>, tenantClaim: string): CallerIdentity {
  const tenant = claims[tenantClaim];
  if (typeof tenant !== 'string' || tenant.trim() === '') {
    throw new ForbiddenError(`The token carries no single tenant in its "${tenantClaim}" claim.`);
  }
  const sub = claims.sub;
  return { tenantId: tenant, subject: typeof sub === 'string' && sub !== '' ? sub : 'unknown' };
}
