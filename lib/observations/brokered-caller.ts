import { assertAllowedBroker, BROKER_REFUSALS, brokerOf } from '../auth/broker.js';
import { insufficientScope } from '../auth/challenge.js';
import { badScopeClaimSentence, type EndpointScope, readScopeClaim } from '../auth/endpoint-scope.js';
import { identityFromClaims } from '../auth/identity.js';
import { hasScope } from '../auth/scopes.js';
import { bearerToken, hasAudience, remoteKeys, verifySignedToken } from '../auth/verify.js';
import type { Settings } from '../config.js';
import { httpError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { annotateTenant } from '../observability/tracer.js';
import { type RestRequest, singleHeader } from '../rest-request.js';

/** Who asked, as far as the verified token says: what the audit item records. */
export interface BrokeredCaller {
  subject: string | null;
  /** null when the token names no single tenant (which is refused). */
  tenantId: string | null;
  broker: string | null;
  /** The token's endpoint scope; `invalid` for a bad claim (which is refused). */
  scope: EndpointScope | 'invalid';
}

/** A caller whose token verified: who asked, and the token's claims, which say what it may read. */
export interface VerifiedCaller {
  caller: BrokeredCaller;
  claims: Record<string, unknown>;
}

/**
 * The caller of the private observations operation: a bearer token whose audience is this service
 * (verified here: no authorizer sits in front of the private API), obtained by a broker through
 * token exchange. The token names the user (`sub`), the tenant and the broker (`BROKER_CLAIM`,
 * `act.sub` by default), which must be on `BROKER_ALLOW_LIST`, and the user's endpoint scope
 * (`ENDPOINT_SCOPE_CLAIM`, which the exchange must carry), and it must grant the operation's scope
 * (OBSERVATIONS_SCOPE, whenever the public doors require theirs).
 *
 * A token that does not verify is thrown as a 401: nothing is known yet. Once it verified, who
 * asked is known (for the audit trail to record under the tenant and subject the token names),
 * and allowedRead says what it may read.
 */
export async function verifyBrokeredCaller(
  cfg: Pick<Settings, 'jwtIssuer' | 'jwksUrl' | 'tenantClaim' | 'brokerClaim' | 'scopeClaim'>,
  request: RestRequest,
  signal: AbortSignal,
): Promise<VerifiedCaller> {
  const token = bearerToken(singleHeader(request, 'authorization', 'Authorization'));
  const claims = (await verifySignedToken(token, { issuer: cfg.jwtIssuer, keys: remoteKeys(cfg), signal })) as Record<string, unknown>;
  let tenantId: string | null = null;
  try {
    tenantId = identityFromClaims(claims, cfg.tenantClaim).tenantId;
  } catch {
    // No single tenant: refused by allowedRead, in its turn.
  }
  const caller: BrokeredCaller = {
    subject: typeof claims.sub === 'string' ? claims.sub : null,
    tenantId,
    broker: brokerOf(claims, cfg.brokerClaim),
    scope: readScopeClaim(claims[cfg.scopeClaim]),
  };
  logger.appendKeys({ tenant: tenantId ?? undefined, subject: caller.subject, broker: caller.broker ?? undefined });
  if (tenantId !== null) annotateTenant(tenantId);
  return { caller, claims };
}

/**
 * What a verified caller may read: its tenant, in its endpoint scope. Throws the 403 of the first
 * reason it may read nothing, judged in this order: a token the issuer signed for another audience
 * (a user's MCP or inventory token passed through), no broker or one not allowed, the operation's
 * scope missing, no single tenant, a bad scope claim.
 */
export function allowedRead(
  cfg: Pick<Settings, 'observationsAudience' | 'brokerAllowList' | 'observationsScope' | 'oauthScopeClaim' | 'tenantClaim' | 'scopeClaim'>,
  { caller, claims }: VerifiedCaller,
): { tenantId: string; scope: EndpointScope } {
  if (!hasAudience(claims, cfg.observationsAudience)) throw httpError(403, BROKER_REFUSALS.passthrough);
  assertAllowedBroker(caller.broker, cfg.brokerAllowList);
  // The operation's own scope (lib/auth/scopes.ts), which the broker asks for in its exchange.
  if (cfg.observationsScope !== undefined && !hasScope(claims, cfg.observationsScope, cfg.oauthScopeClaim)) {
    throw insufficientScope(undefined, cfg.observationsScope, 'the broker asks for it in its token exchange');
  }
  const { tenantId } = identityFromClaims(claims, cfg.tenantClaim);
  if (caller.scope === 'invalid') throw httpError(403, badScopeClaimSentence(cfg.scopeClaim));
  return { tenantId, scope: caller.scope };
}
