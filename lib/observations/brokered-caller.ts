import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { assertAllowedBroker, BROKER_REFUSALS, brokerOf } from '../auth/broker.js';
import { insufficientScope } from '../auth/challenge.js';
import { badScopeClaimSentence, readScopeClaim } from '../auth/endpoint-scope.js';
import { identityFromClaims } from '../auth/identity.js';
import { hasScope } from '../auth/scopes.js';
import { AudienceMismatchError, bearerToken, remoteKeys, verifyBearerToken } from '../auth/verify.js';
import { config } from '../config.js';
import { ForbiddenError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { singleHeader } from '../rest-event.js';
import type { ObservationsContext } from './context.js';

/**
 * The caller of the private observations operation: a bearer token whose audience is this service
 * (verified here: no authorizer sits in front of the private API), obtained by a broker through
 * token exchange. The token names the user (`sub`), the tenant and the broker (`BROKER_CLAIM`,
 * `act.sub` by default), which must be on `BROKER_ALLOW_LIST`, and the user's endpoint scope
 * (`ENDPOINT_SCOPE_CLAIM`, which the exchange must carry), and it must grant the operation's
 * scope (OBSERVATIONS_SCOPE, whenever the public doors require theirs). 401 before anything is known; once
 * the token verified, every refusal (a bad scope claim included) is a 403 that the audit trail records. A token the issuer
 * signed for another audience (a user's MCP or inventory token passed through) verified in all but
 * its audience: it is such a refusal too, audited under the tenant and subject it names.
 */
export function brokeredCaller(): MiddlewareObj<APIGatewayProxyEvent, unknown, Error, ObservationsContext> {
  const establishCaller = async (request: Request<APIGatewayProxyEvent, unknown, Error, ObservationsContext>): Promise<void> => {
    const cfg = config();
    const { event, context } = request;
    const token = bearerToken(singleHeader(event, 'authorization', 'Authorization'));
    let claims: Record<string, unknown>;
    let passthrough = false;
    try {
      claims = (await verifyBearerToken(token, {
        issuer: cfg.jwtIssuer,
        audience: cfg.observationsAudience,
        keys: remoteKeys(cfg.jwksUrl),
        ...(context.deadline ? { signal: context.deadline } : {}),
      })) as Record<string, unknown>;
    } catch (error) {
      if (!(error instanceof AudienceMismatchError)) throw error;
      claims = error.claims as Record<string, unknown>;
      passthrough = true;
    }
    // Read the tenant before judging the broker, so a refused broker is audited under the tenant.
    let tenantId: string | null = null;
    let noTenant: unknown;
    try {
      tenantId = identityFromClaims(claims, cfg.tenantClaim).tenantId;
    } catch (error) {
      noTenant = error;
    }
    const broker = brokerOf(claims, cfg.brokerClaim);
    const scope = readScopeClaim(claims[cfg.scopeClaim]);
    context.caller = { subject: typeof claims.sub === 'string' ? claims.sub : null, tenantId, broker, scope };
    logger.appendKeys({ tenant: tenantId ?? undefined, subject: context.caller.subject, broker: broker ?? undefined });
    if (passthrough) throw new ForbiddenError(BROKER_REFUSALS.passthrough);
    assertAllowedBroker(broker, cfg.brokerAllowList);
    // The operation's own scope (lib/auth/scopes.ts), which the broker asks for in its exchange.
    if (cfg.observationsScope !== undefined && !hasScope(claims, cfg.observationsScope, cfg.oauthScopeClaim)) {
      throw insufficientScope(cfg, undefined, cfg.observationsScope, 'the broker asks for it in its token exchange');
    }
    if (noTenant) throw noTenant;
    if (scope === 'invalid') throw new ForbiddenError(badScopeClaimSentence(cfg.scopeClaim));
  };
  return { before: establishCaller };
}
