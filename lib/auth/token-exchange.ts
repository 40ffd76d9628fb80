import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * The broker's side of an RFC 8693 token exchange: the user's token for the MCP resource is
 * traded at the issuer's token endpoint for a token for the observations service, in which the
 * issuer names the broker as actor. The user's token is never passed on unchanged (token
 * passthrough is forbidden by the MCP authorization rules).
 */

/** RFC 8693's grant type and its token type for an access token. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * Why an exchange failed, in the terms the caller acts on: the issuer is down or slow (retry), it
 * refused the user's token (sign in again), or it refused the broker itself (misconfiguration).
 */
export type ExchangeFailureKind = 'unavailable' | 'timeout' | 'subject-refused' | 'misconfigured';

export class TokenExchangeError extends Error {
  override name = 'TokenExchangeError';
  constructor(
    readonly kind: ExchangeFailureKind,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export interface ExchangeRequest {
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  /** The user's token, as the MCP door received it. */
  subjectToken: string;
  audience: string;
  /** The scope asked for the exchanged token (the observations operation's), when one is required. */
  scope?: string | undefined;
  /** Bounds the whole exchange (the caller's deadline). */
  signal: AbortSignal;
}

export interface ExchangedToken {
  token: string;
  /** Epoch milliseconds after which the token must not be used. */
  expiresAt: number;
}

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before they are joined and base64-encoded. */
function basicCredentials(id: string, secret: string): string {
  const form = (v: string): string => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${form(id)}:${form(secret)}`).toString('base64')}`;
}

const MISCONFIGURATION_ERRORS = new Set([
  'invalid_client',
  'unauthorized_client',
  'invalid_target',
  'unsupported_grant_type',
  'invalid_request',
  'invalid_scope',
]);

/** One exchange at the token endpoint; every failure is a TokenExchangeError naming its kind. */
export async function exchangeToken(request: ExchangeRequest): Promise<ExchangedToken> {
  const started = Date.now();
  let response: Response;
  try {
    response = await fetch(request.tokenEndpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'application/json',
        Authorization: basicCredentials(request.clientId, request.clientSecret),
      },
      body: new URLSearchParams({
        grant_type: TOKEN_EXCHANGE_GRANT,
        subject_token: request.subjectToken,
        subject_token_type: ACCESS_TOKEN_TYPE,
        requested_token_type: ACCESS_TOKEN_TYPE,
        audience: request.audience,
        ...(request.scope !== undefined ? { scope: request.scope } : {}),
      }),
      signal: request.signal,
    });
  } catch (cause) {
    if (request.signal.aborted) throw new TokenExchangeError('timeout', 'The token endpoint did not answer in time.', { cause });
    throw new TokenExchangeError('unavailable', 'The token endpoint could not be reached.', { cause });
  }
  let body: { access_token?: unknown; expires_in?: unknown; error?: unknown } | undefined;
  try {
    body = (await response.json()) as typeof body;
  } catch (cause) {
    if (request.signal.aborted) throw new TokenExchangeError('timeout', 'The token endpoint did not answer in time.', { cause });
    body = undefined;
  }
  if (response.status >= 500 || response.status === 429) {
    throw new TokenExchangeError('unavailable', `The token endpoint answered ${response.status}.`);
  }
  if (!response.ok) {
    const error = typeof body?.error === 'string' ? body.error : 'unknown';
    if (error === 'invalid_grant')
      throw new TokenExchangeError('subject-refused', "The issuer refused to exchange the user's token (invalid_grant).");
    const kind = MISCONFIGURATION_ERRORS.has(error) || response.status === 401 ? 'misconfigured' : 'unavailable';
    throw new TokenExchangeError(kind, `The token endpoint refused the exchange (${response.status} ${error}).`);
  }
  if (typeof body?.access_token !== 'string' || body.access_token === '') {
    throw new TokenExchangeError('unavailable', 'The token endpoint answered without an access token.');
  }
  const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 60;
  return { token: body.access_token, expiresAt: started + lifetime * 1000 };
}

/** What one exchange needs besides the key: the exchange itself, and when the user's token expires. */
interface ExchangeContext {
  exchange: () => Promise<ExchangedToken>;
  subjectExpiresAt: number;
}

/**
 * Exchanged tokens, kept per user token and audience on lru-cache, so a burst of tool calls costs
 * one exchange: calls that need the same token while it is being exchanged share that one
 * exchange (lru-cache's single-flight `fetch`; each caller still stops at its own deadline), and a
 * token is kept only while both it and the user's token stay valid (less a margin), never past the
 * user's sign-in. Keys are hashes: the cache holds no user token in the clear. Bounded: the least
 * recently used entry leaves first. A failed exchange is not kept.
 */
export class ExchangedTokenCache {
  private readonly cache: LRUCache<string, ExchangedToken, ExchangeContext>;

  constructor(
    maxEntries = 500,
    /** Stop using a token this long before it expires: it must survive the hop and the handler's check. */
    private readonly marginMs = 30_000,
    /** The clock, in epoch milliseconds. */
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new LRUCache<string, ExchangedToken, ExchangeContext>({
      max: maxEntries,
      perf: { now },
      ttlResolution: 0,
      fetchMethod: async (_key, _stale, { context, options }) => {
        const exchanged = await context.exchange();
        const kept = { token: exchanged.token, expiresAt: Math.min(exchanged.expiresAt, context.subjectExpiresAt) };
        options.ttl = this.ttlOf(kept);
        return kept;
      },
    });
  }

  private static key(subjectToken: string, audience: string): string {
    return createHash('sha256').update(audience).update('\n').update(subjectToken).digest('base64url');
  }

  /** How long a token is kept: until its expiry less the margin (at least 1 ms: lru-cache reads 0 as forever). */
  private ttlOf(token: ExchangedToken): number {
    return Math.max(1, token.expiresAt - this.marginMs - this.now());
  }

  get(subjectToken: string, audience: string): string | undefined {
    return this.cache.get(ExchangedTokenCache.key(subjectToken, audience))?.token;
  }

  /** Keeps an exchanged token until it or the user's token (`subjectExpiresAt`, epoch ms) expires, whichever is first. */
  set(subjectToken: string, audience: string, exchanged: ExchangedToken, subjectExpiresAt = Number.POSITIVE_INFINITY): void {
    const kept = { token: exchanged.token, expiresAt: Math.min(exchanged.expiresAt, subjectExpiresAt) };
    this.cache.set(ExchangedTokenCache.key(subjectToken, audience), kept, { ttl: this.ttlOf(kept) });
  }

  /**
   * The token for this user and audience: from the cache, or from `exchange`, run once for all the
   * callers that ask while it runs (each still bounded by its own `signal`). A failed exchange is
   * not kept: the next call tries again.
   */
  async obtain(
    subjectToken: string,
    audience: string,
    exchange: () => Promise<ExchangedToken>,
    options: { subjectExpiresAt?: number | undefined; signal: AbortSignal },
  ): Promise<{ token: string; cached: boolean }> {
    const key = ExchangedTokenCache.key(subjectToken, audience);
    const cached = this.cache.get(key);
    if (cached) return { token: cached.token, cached: true };
    options.signal.throwIfAborted();
    const flight = this.cache.fetch(key, { context: { exchange, subjectExpiresAt: options.subjectExpiresAt ?? Number.POSITIVE_INFINITY } });
    // Each waiter stops at its own deadline; the exchange goes on for the others.
    const exchanged = await new Promise<ExchangedToken | undefined>((resolve, reject) => {
      const abort = (): void => reject(options.signal.reason);
      options.signal.addEventListener('abort', abort, { once: true });
      flight.then(resolve, reject).finally(() => options.signal.removeEventListener('abort', abort));
    });
    if (!exchanged) throw new TokenExchangeError('unavailable', 'The token endpoint answered without an access token.');
    return { token: exchanged.token, cached: false };
  }

  /** Forgets a token the upstream refused, so the next call exchanges again. */
  forget(subjectToken: string, audience: string): void {
    this.cache.delete(ExchangedTokenCache.key(subjectToken, audience));
  }
}
