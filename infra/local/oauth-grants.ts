import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { prune } from './expiring-map.js';
import type { LocalIssuer } from './issuer.js';
import { ClientError, type OAuthClient } from './oauth-clients.js';

/**
 * What the local authorization server hands out to a signed-in user: single-use authorization
 * codes bound to the client, its redirect URI, the PKCE challenge (S256) and the resource; access
 * tokens for exactly the resource asked (RFC 8707: `aud` is the resource); rotating refresh tokens
 * bound to the same. All in memory, bounded, forgotten at a restart.
 */

export const ACCESS_TOKEN_SECONDS = 3_600;
const CODE_SECONDS = 60;
const REFRESH_TOKEN_SECONDS = 7 * 86_400;
const MAX_CODES = 1_000;
const MAX_REFRESH_TOKENS = 10_000;
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Who signed in, and for what: what a code and a refresh token carry. */
export interface Grant {
  clientId: string;
  tenant: string;
  subject: string;
  /** The resource the tokens are for (their `aud`). */
  resource: string;
  scope?: string | undefined;
  /** The endpoint groups signed in with (the token's scope claim); none: the claim is left out. */
  groups?: readonly string[] | undefined;
}

interface PendingCode extends Grant {
  redirectUri: string;
  codeChallenge: string;
  expiresAt: number;
}

interface StoredRefresh extends Grant {
  expiresAt: number;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope?: string;
}

export interface GrantPolicy {
  issuer: string;
  tenantClaim: string;
  scopeClaim: string;
}

const digest = (value: string): string => createHash('sha256').update(value).digest('base64url');

export class GrantStore {
  private readonly codes = new Map<string, PendingCode>();
  /** By the hash of the refresh token: the store holds none in the clear. */
  private readonly refreshTokens = new Map<string, StoredRefresh>();

  constructor(
    private readonly issuer: LocalIssuer,
    private readonly policy: () => GrantPolicy,
  ) {}

  /** A fresh code for a signed-in user (returned once; the store keeps its hash). */
  issueCode(grant: Grant, redirectUri: string, codeChallenge: string): string {
    const code = randomBytes(32).toString('base64url');
    this.codes.set(digest(code), { ...grant, redirectUri, codeChallenge, expiresAt: Date.now() + CODE_SECONDS * 1000 });
    prune(this.codes, MAX_CODES);
    return code;
  }

  /**
   * RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.6) and RFC 8707: the code is used up at the first
   * attempt, whatever its outcome; it must belong to this client, come with the same redirect URI,
   * the verifier whose S256 is the challenge, and no other resource than the one signed in for.
   */
  async redeemCode(client: OAuthClient, form: URLSearchParams): Promise<TokenResponse> {
    const pending = take(this.codes, form, 'code', client, {
      unknown: 'The authorization code is unknown, used or expired.',
      name: 'The authorization code',
    });
    if (form.get('redirect_uri') !== pending.redirectUri)
      throw new ClientError('invalid_grant', 'redirect_uri must be the one of the authorization request.');
    const verifier = form.get('code_verifier') ?? '';
    if (!CODE_VERIFIER.test(verifier))
      throw new ClientError('invalid_grant', 'code_verifier is required: 43 to 128 letters, digits and -._~ characters (PKCE).');
    if (digest(verifier) !== pending.codeChallenge)
      throw new ClientError('invalid_grant', 'code_verifier does not match the code_challenge (PKCE S256).');
    assertSameResource(form, pending.resource);
    return this.tokens(client, pending);
  }

  /** RFC 6749 §6 with rotation: the refresh token is replaced by a new one at every use. */
  async refresh(client: OAuthClient, form: URLSearchParams): Promise<TokenResponse> {
    if (!client.grant_types.includes('refresh_token'))
      throw new ClientError('unauthorized_client', 'This client did not register the refresh_token grant.');
    const stored = take(this.refreshTokens, form, 'refresh_token', client, {
      unknown: 'The refresh token is unknown, used or expired; sign in again.',
      name: 'The refresh token',
    });
    assertSameResource(form, stored.resource);
    return this.tokens(client, stored);
  }

  private async tokens(client: OAuthClient, grant: Grant): Promise<TokenResponse> {
    const policy = this.policy();
    const accessToken = await this.issuer.sign({
      issuer: policy.issuer,
      audience: grant.resource,
      tenant: grant.tenant,
      tenantClaim: policy.tenantClaim,
      subject: grant.subject,
      expiresInSeconds: ACCESS_TOKEN_SECONDS,
      extra: {
        client_id: grant.clientId,
        jti: randomUUID(),
        ...(grant.scope ? { scope: grant.scope } : {}),
        ...(grant.groups ? { [policy.scopeClaim]: [...grant.groups] } : {}),
      },
    });
    const response: TokenResponse = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_SECONDS,
      ...(grant.scope ? { scope: grant.scope } : {}),
    };
    if (client.grant_types.includes('refresh_token')) {
      const refreshToken = randomBytes(32).toString('base64url');
      const { clientId, tenant, subject, resource, scope, groups } = grant;
      this.refreshTokens.set(digest(refreshToken), {
        clientId,
        tenant,
        subject,
        resource,
        scope,
        groups,
        expiresAt: Date.now() + REFRESH_TOKEN_SECONDS * 1000,
      });
      prune(this.refreshTokens, MAX_REFRESH_TOKENS);
      response.refresh_token = refreshToken;
    }
    return response;
  }
}

/**
 * The grant stored under the hash of the form's `field`, used up at the first attempt whatever
 * its outcome (a code or a rotating refresh token is good once); it must be current and belong to
 * `client`.
 */
function take<T extends { clientId: string; expiresAt: number }>(
  store: Map<string, T>,
  form: URLSearchParams,
  field: string,
  client: OAuthClient,
  words: { unknown: string; name: string },
): T {
  const value = form.get(field);
  if (!value) throw new ClientError('invalid_request', `${field} is required.`);
  const key = digest(value);
  const stored = store.get(key);
  store.delete(key);
  if (!stored || stored.expiresAt <= Date.now()) throw new ClientError('invalid_grant', words.unknown);
  if (stored.clientId !== client.client_id) throw new ClientError('invalid_grant', `${words.name} was issued to another client.`);
  return stored;
}

/** RFC 8707 §2.2: a token request may name the resource again; here it must be the one granted. */
function assertSameResource(form: URLSearchParams, granted: string): void {
  const asked = form.getAll('resource');
  if (asked.length > 1 || (asked.length === 1 && asked[0] !== granted)) {
    throw new ClientError('invalid_target', 'resource must be the one the user signed in for.');
  }
}
