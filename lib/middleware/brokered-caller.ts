import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { allowedBroker, brokerName } from '../auth/broker.js';
import { identityFromClaims } from '../auth/identity.js';
import { bearerToken, remoteKeys, verifyBearerToken } from '../auth/verify.js';
import { config } from '../config.js';
import type { ObservationsContext } from '../observations/context.js';
import { logger } from '../observability/logger.js';
import { singleHeader } from './rest-event.js';

/**
 * The caller of the private observations operation: a bearer token for the user whose audience is
 * this service (verified here: no JWT authorizer sits in front), the broker that invoked us (IAM
 * principal, on the allow-list), and the tenant from the token. 401 before anything is known; once
 * the token verified, every refusal is a 403 that the audit trail records.
 */
export function brokeredCaller(): MiddlewareObj<APIGatewayProxyEvent, unknown, Error, ObservationsContext> {
  const establishCaller = async (request: Request<APIGatewayProxyEvent, unknown, Error, ObservationsContext>): Promise<void> => {
    const cfg = config();
    const { event, context } = request;
    const token = bearerToken(singleHeader(event, 'authorization', 'Authorization'));
    const claims = await verifyBearerToken(token, {
      issuer: cfg.jwtIssuer,
      audience: cfg.observationsAudience,
      keys: remoteKeys(cfg.jwksUrl),
    });
    const identity = event.requestContext?.identity;
    // Read the tenant before judging the broker, so a refused broker is audited under the tenant.
    let tenantId: string | null = null;
    let noTenant: unknown;
    try {
      tenantId = identityFromClaims(claims as Record<string, unknown>, cfg.tenantClaim).tenantId;
    } catch (error) {
      noTenant = error;
    }
    context.caller = {
      subject: typeof claims.sub === 'string' ? claims.sub : null,
      tenantId,
      broker: brokerName(identity) ?? null,
    };
    logger.appendKeys({ tenant: tenantId ?? undefined, subject: context.caller.subject, broker: context.caller.broker });
    allowedBroker(identity, cfg.brokerAllowList);
    if (noTenant) throw noTenant;
  };
  return { before: establishCaller };
}
