import { randomUUID } from 'node:crypto';
import type { LocalIssuer } from './issuer.js';
import { SERVICE_DEFAULTS } from './settings.js';

/**
 * The tokens of the RFC 8693 token exchange at the local authorization server
 * (local/token-exchange-grant.ts): the MCP broker trades the user's token for the MCP
 * resource for a short-lived token for the observations service, which names the user (`sub`,
 * tenant claim, and the endpoint scope claim when the user's token has one) and the broker as
 * actor (`act.sub`, RFC 8693 §4.1). Signed here, so `npm run token -- --as-broker`, the tests and
 * the bench get exactly what the exchange issues.
 */

/** RFC 8693's identifiers: the grant type, and the token type of an access token. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** Lifetime of an exchanged token: short, the broker exchanges again when it needs to. */
export const EXCHANGED_TOKEN_SECONDS = 300;

export interface ExchangedTokenRequest {
  /** Claims of the verified subject token (the user's token for the MCP resource). */
  subject: Record<string, unknown>;
  clientId: string;
  audience: string;
  /** The scope the broker asked for and was granted (the observations operation's), as the token's `scope`. */
  scope?: string | undefined;
}

/**
 * Signs the token an exchange issues: `sub`, the tenant claim and the endpoint scope claim copied
 * from the subject token (the scope exactly as it is, whatever its form, or left out when the
 * subject token has none: the exchange never widens nor narrows it), `aud` the requested audience, `scope` the scope granted, `act.sub` the exchanging client (an actor already in the subject
 * token is kept nested below it), a fresh `jti`, and the lifetime given (never past the subject token's, see local/token-exchange-grant.ts).
 */
export async function issueExchangedToken(
  issuer: LocalIssuer,
  policy: { issuer: string; tenantClaim: string; scopeClaim: string; lifetimeSeconds: number },
  request: ExchangedTokenRequest,
): Promise<string> {
  const { subject } = request;
  const tenant = subject[policy.tenantClaim];
  const act: Record<string, unknown> = { sub: request.clientId };
  if (subject.act && typeof subject.act === 'object') act.act = subject.act;
  const extra: Record<string, unknown> = { act, jti: randomUUID() };
  if (subject[policy.scopeClaim] !== undefined) extra[policy.scopeClaim] = subject[policy.scopeClaim];
  return issuer.sign({
    issuer: policy.issuer,
    audience: request.audience,
    subject: typeof subject.sub === 'string' ? subject.sub : 'unknown',
    ...(typeof tenant === 'string' ? { tenant, tenantClaim: policy.tenantClaim } : {}),
    expiresInSeconds: policy.lifetimeSeconds,
    scope: request.scope,
    extra,
  });
}

export interface BrokerTokenFor {
  /** The issuer's `iss`, tenant and scope claims and the broker's client id and target audience, as configured. */
  issuer: string;
  tenantClaim: string;
  /** The configured ENDPOINT_SCOPE_CLAIM. */
  scopeClaim: string;
  clientId: string;
  audience: string;
  /** Default EXCHANGED_TOKEN_SECONDS. */
  lifetimeSeconds?: number;
  /** The scope granted (default the observations operation's; undefined in options: none). */
  scope?: string | undefined;
}

/**
 * The token the token endpoint would issue to the broker for this user (`tenant` undefined: a
 * token without the tenant claim; `groups` undefined: without the scope claim, else its value as
 * the user's token would carry it), signed directly: for `npm run token -- --as-broker`, the tests
 * and the bench, which need the token without a user token and an HTTP round trip first.
 */
export function brokerTokenFor(
  issuer: LocalIssuer,
  broker: BrokerTokenFor,
  user: { subject: string; tenant?: string | undefined; groups?: unknown },
): Promise<string> {
  const { scopeClaim } = broker;
  return issueExchangedToken(
    issuer,
    {
      issuer: broker.issuer,
      tenantClaim: broker.tenantClaim,
      scopeClaim,
      lifetimeSeconds: broker.lifetimeSeconds ?? EXCHANGED_TOKEN_SECONDS,
    },
    {
      subject: {
        sub: user.subject,
        ...(user.tenant !== undefined ? { [broker.tenantClaim]: user.tenant } : {}),
        ...(user.groups !== undefined ? { [scopeClaim]: user.groups } : {}),
      },
      clientId: broker.clientId,
      audience: broker.audience,
      scope: 'scope' in broker ? broker.scope : SERVICE_DEFAULTS.observationsScope,
    },
  );
}
