import { randomUUID } from 'node:crypto';
import { ACCESS_TOKEN_TYPE } from '../../lib/auth/token-exchange.js';
import { verifyBearerToken } from '../../lib/auth/verify.js';
import type { LocalIssuer } from './issuer.js';
import { presentedCredentials, sameSecret } from './oauth-clients.js';

/**
 * The local issuer's OAuth 2.0 token endpoint for one grant: RFC 8693 token exchange. The MCP
 * broker, a confidential client, trades the user's token for the MCP resource for a short-lived
 * token for the observations service, which names the user (`sub`, tenant claim, and the endpoint
 * scope claim when the user's token has one) and the broker as actor (`act.sub`, RFC 8693 §4.1).
 * Errors are RFC 6749 §5.2 JSON bodies.
 */

const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
/** Lifetime of an exchanged token: short, the broker exchanges again when it needs to. */
export const EXCHANGED_TOKEN_SECONDS = 300;

export interface TokenExchangePolicy {
  /** `iss` of the subject tokens it accepts and of the tokens it issues. */
  issuer: string;
  /** Confidential clients allowed to exchange: client id -> client secret. */
  clients: ReadonlyMap<string, string>;
  /** The audience a subject token must carry: the resource the broker serves (the MCP audience). */
  subjectAudience: string;
  /** The audiences a client may ask for (the observations audience). */
  targetAudiences: readonly string[];
  tenantClaim: string;
  /** The endpoint scope claim (ENDPOINT_SCOPE_CLAIM), copied as it is: the service judges it. */
  scopeClaim: string;
  /** Lifetime of an issued token; short, since the broker exchanges again whenever it needs to. */
  lifetimeSeconds: number;
}

export interface TokenEndpointAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const NO_STORE = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', Pragma: 'no-cache' };

function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): TokenEndpointAnswer {
  return { status, headers: { ...NO_STORE, ...headers }, body: { error, error_description: description } };
}

export interface ExchangedTokenRequest {
  /** Claims of the verified subject token (the user's token for the MCP resource). */
  subject: Record<string, unknown>;
  clientId: string;
  audience: string;
}

/**
 * Signs the token an exchange issues: `sub`, the tenant claim and the endpoint scope claim copied
 * from the subject token (the scope exactly as it is, whatever its form, or left out when the
 * subject token has none: the exchange never widens nor narrows it), `aud` the requested audience, `act.sub` the exchanging client (an actor already in the subject
 * token is kept nested below it), a fresh `jti`, and the lifetime given (never past the subject token's, see answerTokenRequest).
 */
export async function issueExchangedToken(
  issuer: LocalIssuer,
  policy: Pick<TokenExchangePolicy, 'issuer' | 'tenantClaim' | 'scopeClaim' | 'lifetimeSeconds'>,
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
  return issueExchangedToken(
    issuer,
    {
      issuer: broker.issuer,
      tenantClaim: broker.tenantClaim,
      scopeClaim: broker.scopeClaim,
      lifetimeSeconds: broker.lifetimeSeconds ?? EXCHANGED_TOKEN_SECONDS,
    },
    {
      subject: {
        sub: user.subject,
        ...(user.tenant !== undefined ? { [broker.tenantClaim]: user.tenant } : {}),
        ...(user.groups !== undefined ? { [broker.scopeClaim]: user.groups } : {}),
      },
      clientId: broker.clientId,
      audience: broker.audience,
    },
  );
}

/**
 * Answers one token-exchange `POST /oauth2/token` (form already parsed; the endpoint routes other
 * grants elsewhere). Refuses, in this order: a client that does not authenticate (`invalid_client`, 401), missing
 * or unsupported parameters (`invalid_request`), an audience the client may not ask for
 * (`invalid_target`), and a subject token that does not verify or is not for the broker's
 * resource (`invalid_grant`). The token issued expires with the subject token if that comes first.
 */
export async function answerTokenRequest(
  issuer: LocalIssuer,
  policy: TokenExchangePolicy,
  form: URLSearchParams,
  authorization: string | undefined,
): Promise<TokenEndpointAnswer> {
  const presented = presentedCredentials(form, authorization);
  if (presented === 'ambiguous') return oauthError(400, 'invalid_request', 'Authenticate the client one way only.');
  const client =
    presented !== 'malformed' && presented.id !== undefined && presented.secret !== undefined
      ? { id: presented.id, secret: presented.secret }
      : undefined;
  const expected = client ? policy.clients.get(client.id) : undefined;
  if (!client || expected === undefined || !sameSecret(client.secret, expected)) {
    return oauthError(401, 'invalid_client', 'Client authentication failed.', { 'WWW-Authenticate': 'Basic realm="local-issuer"' });
  }
  for (const name of ['grant_type', 'subject_token', 'subject_token_type', 'audience', 'resource', 'requested_token_type']) {
    if (form.getAll(name).length > 1) return oauthError(400, 'invalid_request', `The parameter ${name} was sent more than once.`);
  }
  const subjectToken = form.get('subject_token');
  if (!subjectToken) return oauthError(400, 'invalid_request', 'subject_token is required.');
  const subjectType = form.get('subject_token_type');
  if (subjectType !== ACCESS_TOKEN_TYPE && subjectType !== JWT_TOKEN_TYPE) {
    return oauthError(400, 'invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}.`);
  }
  const requestedType = form.get('requested_token_type');
  if (requestedType !== null && requestedType !== ACCESS_TOKEN_TYPE) {
    return oauthError(400, 'invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}.`);
  }
  const audience = form.get('audience') ?? form.get('resource');
  if (!audience || !policy.targetAudiences.includes(audience)) {
    return oauthError(400, 'invalid_target', 'The client may not obtain a token for that audience.');
  }
  let subject: Record<string, unknown>;
  try {
    subject = (await verifyBearerToken(subjectToken, {
      issuer: policy.issuer,
      audience: policy.subjectAudience,
      keys: issuer.keys,
    })) as Record<string, unknown>;
  } catch (error) {
    return oauthError(400, 'invalid_grant', `The subject token is not acceptable: ${(error as Error).message}`);
  }
  // Never outlives the subject token: a sign-in that ends ends the broker's access for it too.
  const lifetimeSeconds = Math.min(policy.lifetimeSeconds, Number(subject.exp) - Math.floor(Date.now() / 1000));
  if (!(lifetimeSeconds > 0)) return oauthError(400, 'invalid_grant', 'The subject token is about to expire.');
  const token = await issueExchangedToken(issuer, { ...policy, lifetimeSeconds }, { subject, clientId: client.id, audience });
  return {
    status: 200,
    headers: NO_STORE,
    body: { access_token: token, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: lifetimeSeconds },
  };
}
