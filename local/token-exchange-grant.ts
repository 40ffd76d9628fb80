import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { LocalIssuer } from './issuer.js';
import { checkToken } from './token-check.js';
import { ACCESS_TOKEN_TYPE, EXCHANGED_TOKEN_SECONDS, issueExchangedToken } from './token-exchange.js';

/**
 * RFC 8693 token exchange as a grant type registered with oidc-provider, which has none of its
 * own for it: oidc-provider authenticates the client (its secret) and parses the parameters; this
 * checks the request and signs the token (local/token-exchange.ts).
 */

const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

/** What the exchange checks, as configured for the local stack. */
export interface TokenExchangePolicy {
  /** `iss` of the subject tokens it accepts and of the tokens it issues. */
  issuer: string;
  /** The one client allowed to exchange (the MCP broker). */
  brokerClientId: string;
  /** The audience a subject token must carry: the resource the broker serves (the MCP audience). */
  subjectAudience: string;
  /** The audience the broker may ask for (the observations audience). */
  targetAudience: string;
  tenantClaim: string;
  scopeClaim: string;
  /** The one scope the broker may ask for (the observations operation's); undefined: none is issued. */
  grantableScope: string | undefined;
}

/** The parameters of an RFC 8693 request oidc-provider parses for the grant (no parameter may repeat). */
export const TOKEN_EXCHANGE_PARAMETERS = Object.freeze([
  'subject_token',
  'subject_token_type',
  'requested_token_type',
  'audience',
  'resource',
  'actor_token',
  'actor_token_type',
  'scope',
]);

const invalid = (error: string, description: string): errors.CustomOIDCProviderError =>
  new errors.CustomOIDCProviderError(error, description);

/**
 * The RFC 8693 grant as oidc-provider calls a registered grant type, once it has authenticated
 * the client (its secret) and parsed the parameters. Refuses, in this order: a client other than
 * the broker (`unauthorized_client`), missing or unsupported parameters (`invalid_request`), an
 * audience it may not ask for (`invalid_target`), a scope other than the one it may ask for
 * (`invalid_scope`; the one granted goes into the token's `scope`), and a subject token that does not verify or is
 * not for the broker's resource (`invalid_grant`). The token issued expires with the subject
 * token if that comes first.
 */
export function tokenExchangeGrant(issuer: LocalIssuer, policy: () => TokenExchangePolicy) {
  return async (ctx: KoaContextWithOIDC): Promise<void> => {
    const cfg = policy();
    const client = ctx.oidc.client;
    const params = (ctx.oidc.params ?? {}) as Record<string, string | undefined>;
    if (client?.clientId !== cfg.brokerClientId) throw invalid('unauthorized_client', 'Only the MCP broker may exchange tokens here.');
    const subjectToken = params.subject_token;
    if (!subjectToken) throw invalid('invalid_request', 'subject_token is required.');
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE && params.subject_token_type !== JWT_TOKEN_TYPE) {
      throw invalid('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}.`);
    }
    if (params.requested_token_type !== undefined && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
      throw invalid('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}.`);
    }
    const audience = params.audience ?? params.resource;
    if (audience !== cfg.targetAudience) throw invalid('invalid_target', 'The client may not obtain a token for that audience.');
    const scope = params.scope?.trim() || undefined;
    if (scope !== undefined && scope !== cfg.grantableScope) {
      throw invalid('invalid_scope', `The client may ask for ${cfg.grantableScope ? `the scope ${cfg.grantableScope} only` : 'no scope'}.`);
    }
    let subject: Record<string, unknown>;
    try {
      subject = await checkToken(subjectToken, { issuer: cfg.issuer, audience: cfg.subjectAudience, keys: issuer.keys });
    } catch (error) {
      throw invalid('invalid_grant', `The subject token is not acceptable: ${(error as Error).message}`);
    }
    // Never outlives the subject token: a sign-in that ends ends the broker's access for it too.
    const lifetimeSeconds = Math.min(EXCHANGED_TOKEN_SECONDS, Number(subject.exp) - Math.floor(Date.now() / 1000));
    if (!(lifetimeSeconds > 0)) throw invalid('invalid_grant', 'The subject token is about to expire.');
    const token = await issueExchangedToken(issuer, { ...cfg, lifetimeSeconds }, { subject, clientId: client.clientId, audience, scope });
    ctx.body = {
      access_token: token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: lifetimeSeconds,
      ...(scope !== undefined ? { scope } : {}),
    };
  };
}
