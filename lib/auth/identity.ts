import { httpError, unauthorized } from '../errors.js';

/** Who is calling: the tenant comes only from the verified token, never from the request. */
export interface CallerIdentity {
  tenantId: string;
  subject: string;
}

/**
 * The caller from verified claims (a token's own, or the tenant and subject the token authorizer
 * handed over). A tenant claim that is missing, empty or not a string (an array names no single
 * tenant) is refused (403), never defaulted. No claims at all means no token: 401.
 */
export function identityFromClaims(claims: Record<string, unknown> | undefined, tenantClaim: string): CallerIdentity {
  if (!claims) throw unauthorized('A bearer token is required.');
  const tenant = claims[tenantClaim];
  if (typeof tenant !== 'string' || tenant.trim() === '') {
    throw httpError(403, `The token carries no single tenant in its "${tenantClaim}" claim.`);
  }
  const sub = claims.sub;
  return { tenantId: tenant, subject: typeof sub === 'string' && sub !== '' ? sub : 'unknown' };
}
