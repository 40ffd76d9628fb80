import { assertAllowedBroker, BROKER_REFUSALS, brokerOf } from '../auth/broker.js';
import { insufficientScope } from '../auth/challenge.js';
import { badScopeClaimSentence, type EndpointScope, readScopeClaim } from '../auth/endpoint-scope.js';
import { identityFromClaims } from '../auth/identity.js';
import { hasScope } from '../auth/scopes.js';
import { bearerToken, hasAudience, remoteKeys, verifySignedToken } from '../auth/verify.js';
import { config } from '../config.js';
import { type HttpError, httpError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { type RestRequest, singleHeader } from '../rest-event.js';

/** Who asked, as far as the verified token says: what the audit item records. */
export interface BrokeredCaller {
  subject: string | null;
  /** null when the token names no single tenant (which is refused). */
  tenantId: string | null;
  broker: string | null;
  /** The token's endpoint scope; `invalid` for a bad claim (which is refused). */
  scope: EndpointScope | 'invalid';
}

/** A verified token's caller, and either what it may read (its tenant, in its scope) or why it may read nothing. */
export type VerifiedCaller = { caller: BrokeredCaller } & (
  | { allowed: { tenantId: string; scope: EndpointScope }; refusal?: undefined }
  | { allowed?: undefined; refusal: HttpError }
);

/**
 * The caller of the private observations operation: a bearer token whose audience is this service
 * (verified here: no authorizer sits in front of the private API), obtained by a broker through
 * token exchange. The token names the user (`sub`), the tenant and the broker (`BROKER_CLAIM`,
 * `act.sub` by default), which must be on `BROKER_ALLOW_LIST`, and the user's endpoint scope
 * (`ENDPOINT_SCOPE_CLAIM`, which the exchange must carry), and it must grant the operation's scope
 * (OBSERVATIONS_SCOPE, whenever the public doors require theirs).
 *
 * A token that does not verify is thrown as a 401: nothing is known yet. Once it verified, who
 * asked is known, and a refusal is a 403 handed back beside the caller, for the audit trail to
 * record under the tenant and subject the token names: a token the issuer signed for another
 * audience (a user's MCP or inventory token passed through), no broker or one not allowed, the
 * operation's scope missing, no single tenant, a bad scope claim, judged in that order.
 */
export async function verifyBrokeredCaller(request: RestRequest, signal: AbortSignal): Promise<VerifiedCaller> {
  const cfg = config();
  const token = bearerToken(singleHeader(request, 'authorization', 'Authorization'));
  const claims = (await verifySignedToken(token, { issuer: cfg.jwtIssuer, keys: remoteKeys(cfg.jwksUrl), signal })) as Record<
    string,
    unknown
  >;
  let tenantId: string | null = null;
  let noTenant: HttpError | undefined;
  try {
    tenantId = identityFromClaims(claims, cfg.tenantClaim).tenantId;
  } catch (error) {
    noTenant = error as HttpError;
  }
  const caller: BrokeredCaller = {
    subject: typeof claims.sub === 'string' ? claims.sub : null,
    tenantId,
    broker: brokerOf(claims, cfg.brokerClaim),
    scope: readScopeClaim(claims[cfg.scopeClaim]),
  };
  logger.appendKeys({ tenant: tenantId ?? undefined, subject: caller.subject, broker: caller.broker ?? undefined });

  if (!hasAudience(claims, cfg.observationsAudience)) return { caller, refusal: httpError(403, BROKER_REFUSALS.passthrough) };
  try {
    assertAllowedBroker(caller.broker, cfg.brokerAllowList);
  } catch (error) {
    return { caller, refusal: error as HttpError };
  }
  // The operation's own scope (lib/auth/scopes.ts), which the broker asks for in its exchange.
  if (cfg.observationsScope !== undefined && !hasScope(claims, cfg.observationsScope, cfg.oauthScopeClaim)) {
    return { caller, refusal: insufficientScope(cfg, undefined, cfg.observationsScope, 'the broker asks for it in its token exchange') };
  }
  // identityFromClaims threw exactly when the tenant stayed unknown.
  if (tenantId === null) return { caller, refusal: noTenant as HttpError };
  if (caller.scope === 'invalid') return { caller, refusal: httpError(403, badScopeClaimSentence(cfg.scopeClaim)) };
  return { caller, allowed: { tenantId, scope: caller.scope } };
}
