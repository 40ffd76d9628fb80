import { get as httpsGet } from 'node:https';
import { type CryptoKey, importJWK, type JWK, type JWTHeaderParameters } from 'jose';
import { LRUCache } from 'lru-cache';
import { httpError, retryLater } from '../errors.js';
import { logger } from '../observability/logger.js';
import { recordDiscoveryFailure, recordKeySetFailure } from '../observability/metrics.js';
import { refusedToken } from './challenge.js';
import { DiscoveryError, discoveryUrls, isAbsentDocument, jwksUriOf } from './discovery.js';

/**
 * The issuer's signing keys, fetched from its JWKS URL and kept across invocations of a warm
 * Lambda. The JWKS URL is the one configured (JWKS_URL), else the `jwks_uri` of the issuer's
 * discovery document (lib/auth/discovery.ts), read on first need and kept for the life of the
 * instance once read. The rules, so that an issuer outage is never mistaken for the user's fault:
 * - keys are cached for `maxAgeMs`; an unknown `kid` triggers one refresh, at most once per
 *   `cooldownMs` (so a flood of tokens with made-up key ids cannot turn into a flood of fetches);
 * - a key set that cannot be fetched or read (a 5xx, an HTML page, an empty or invalid body, a
 *   refused connection) is a 503 with `Retry-After` and counts `KeySetFailures`; one that does not
 *   answer in time is a 504; neither is ever a 401;
 * - so is a discovery document that cannot be fetched or used (down, a hang, not JSON, another
 *   issuer's, no usable `jwks_uri`), under the same time bounds, named as such in its sentence, its
 *   log line (`issuer discovery failed`) and `IssuerDiscoveryFailures`; a failed discovery is
 *   asked again after the back-off, never cached;
 * - while the issuer is down, keys fetched earlier keep verifying tokens for up to `staleForMs`.
 * The fetched set lives in lru-cache (its age, one fetch at a time, the caller's abort signal).
 * The rest stays ours, as neither lru-cache nor jose's createRemoteJWKSet (which drops to a
 * failure as soon as a refresh of expired keys fails) has it: stale keys through an outage bounded
 * in time, the failure back-off, the unknown-kid cooldown, and the 503/504 split.
 */

export interface KeySource {
  /** The verification key for a token's protected header; `signal` bounds any fetch. */
  getKey(header: JWTHeaderParameters, signal?: AbortSignal): Promise<CryptoKey | Uint8Array>;
}

export interface RemoteKeySetOptions {
  /** How long fetched keys are used before they are fetched again. */
  maxAgeMs?: number;
  /** The least time between two fetches for an unknown `kid`. */
  cooldownMs?: number;
  /** After a failed fetch, answer 503 at once for this long instead of fetching again. */
  failureBackoffMs?: number;
  /** How long old keys still verify while fresh ones cannot be fetched. */
  staleForMs?: number;
  /** Bound of one fetch, within the caller's own deadline. */
  fetchTimeoutMs?: number;
}

const DEFAULTS = Object.freeze({
  maxAgeMs: 600_000,
  cooldownMs: 30_000,
  failureBackoffMs: 5_000,
  staleForMs: 86_400_000,
  fetchTimeoutMs: 2_000,
});

/** Where the keys are looked for: the configured JWKS URL, or the issuer whose discovery document names it. */
export type KeySetSource = { jwksUrl: string } | { issuer: string };

/** Which fetch failed: the issuer's discovery document, or the key set it (or JWKS_URL) names. */
type FetchStep = 'discovery' | 'keys';

/** Why a fetch failed, in a few words for the log (never the body). */
class KeySetFetchError extends Error {
  override name = 'KeySetFetchError';
  constructor(
    message: string,
    readonly timedOut: boolean,
    readonly step: FetchStep,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** What a failed step says: its log line, and the client's sentence when it took too long or failed. */
const UNAVAILABLE = /* @__PURE__ */ Object.freeze({
  discovery: {
    log: 'issuer discovery failed',
    late: "The issuer's discovery document, which says where its token keys are, could not be fetched in time; try again.",
    down: "The issuer's discovery document, which says where its token keys are, is unavailable right now; try again later.",
  },
  keys: {
    log: 'token keys unavailable',
    late: 'The token keys could not be fetched in time; try again.',
    down: 'The token keys are unavailable right now; try again later.',
  },
});

/** The cache key of the one key set an instance keeps. */
const KEY_SET = 'keys';

interface Fetched {
  keys: Map<string, JWK>;
  at: number;
}

export class RemoteKeySet implements KeySource {
  private readonly options: Required<RemoteKeySetOptions>;
  /** The key set, fresh for `maxAgeMs`; a stale one is kept (not served by `get`) for the outage rule. */
  private readonly fetched: LRUCache<string, Fetched>;
  /** Keys imported from a fetched JWK, per algorithm: they leave with the set they came in. */
  private readonly imported = new WeakMap<JWK, Map<string, CryptoKey | Uint8Array>>();
  private lastAttemptAt = Number.NEGATIVE_INFINITY;
  private lastFailure: { at: number; error: KeySetFetchError } | undefined;
  /** The key set URL: JWKS_URL, or once discovered, the issuer's `jwks_uri` (kept for the instance's life). */
  private jwksUrl: string | undefined;

  constructor(
    readonly source: KeySetSource,
    options: RemoteKeySetOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.jwksUrl = 'jwksUrl' in source ? source.jwksUrl : undefined;
    this.options = { ...DEFAULTS, ...options };
    this.fetched = new LRUCache<string, Fetched>({
      max: 1,
      ttl: this.options.maxAgeMs,
      perf: { now },
      ttlResolution: 0,
      noDeleteOnStaleGet: true,
      noDeleteOnFetchRejection: true,
      fetchMethod: (_key, _stale, { signal }) => this.fetchKeys(signal),
    });
  }

  async getKey(header: JWTHeaderParameters, signal?: AbortSignal): Promise<CryptoKey | Uint8Array> {
    const kid = header.kid;
    if (typeof kid !== 'string' || kid === '') throw refusedToken('The bearer token has no key id.');
    const now = this.now();
    const fresh = this.fetched.get(KEY_SET);
    const known = fresh?.keys.get(kid);
    if (known) return this.importKey(known, header);
    // An unknown kid with fresh keys: refresh once per cooldown, else it is simply not the issuer's key.
    if (fresh && now - this.lastAttemptAt < this.options.cooldownMs) {
      throw refusedToken('The bearer token was signed by an unknown key.');
    }
    let keys: Fetched;
    try {
      keys = await this.refresh(signal);
    } catch (error) {
      const kept = this.fetched.get(KEY_SET, { allowStale: true });
      const stale = kept && now - kept.at < this.options.staleForMs ? kept.keys.get(kid) : undefined;
      if (stale) {
        logger.warn('token keys could not be refreshed; using the keys fetched before', { cause: (error as Error).message });
        return this.importKey(stale, header);
      }
      throw this.failure(error);
    }
    const key = keys.keys.get(kid);
    if (!key) throw refusedToken('The bearer token was signed by an unknown key.');
    return this.importKey(key, header);
  }

  private failure(error: unknown): Error {
    recordKeySetFailure();
    const e =
      error instanceof KeySetFetchError ? error : new KeySetFetchError('the key set could not be read', false, 'keys', { cause: error });
    if (e.step === 'discovery') recordDiscoveryFailure();
    const said = UNAVAILABLE[e.step];
    logger.error(said.log, { cause: e.message });
    return e.timedOut ? httpError(504, said.late, { cause: e }) : retryLater(503, said.down, e);
  }

  private async importKey(jwk: JWK, header: JWTHeaderParameters): Promise<CryptoKey | Uint8Array> {
    const alg = header.alg;
    if (jwk.alg !== undefined && jwk.alg !== alg) throw refusedToken('The bearer token uses a refused algorithm.');
    const byAlg = this.imported.get(jwk) ?? new Map<string, CryptoKey | Uint8Array>();
    this.imported.set(jwk, byAlg);
    let key = byAlg.get(alg);
    if (!key) {
      try {
        key = await importJWK(jwk, alg);
      } catch (cause) {
        throw refusedToken('The bearer token was signed by an unknown key.', cause);
      }
      byAlg.set(alg, key);
    }
    return key;
  }

  /** One fetch at a time (lru-cache's); a failure is remembered briefly, so an outage is not hammered. */
  private async refresh(signal?: AbortSignal): Promise<Fetched> {
    const now = this.now();
    if (this.lastFailure && now - this.lastFailure.at < this.options.failureBackoffMs) throw this.lastFailure.error;
    this.lastAttemptAt = now;
    try {
      const fetched = await this.fetched.fetch(KEY_SET, { forceRefresh: true, ...(signal ? { signal } : {}) });
      if (!fetched) throw new KeySetFetchError('the key set could not be read', false, 'keys');
      this.lastFailure = undefined;
      return fetched;
    } catch (error) {
      const e =
        error instanceof KeySetFetchError
          ? error
          : new KeySetFetchError('the key set could not be read', Boolean(signal?.aborted), 'keys', { cause: error });
      // A fetch cut short by this caller's own deadline says nothing about the issuer.
      if (!signal?.aborted) this.lastFailure = { at: this.now(), error: e };
      throw e;
    }
  }

  private async fetchKeys(signal?: AbortSignal): Promise<Fetched> {
    this.jwksUrl ??= await this.discoverJwksUrl(signal);
    const body = await this.fetchJson(this.jwksUrl, signal, 'keys', 'the key set');
    const list = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(list)) throw new KeySetFetchError('the key set has no keys array', false, 'keys');
    const keys = new Map<string, JWK>();
    for (const jwk of list as JWK[]) {
      if (jwk && typeof jwk === 'object' && jwk.kty === 'RSA' && typeof jwk.kid === 'string' && jwk.use !== 'enc') keys.set(jwk.kid, jwk);
    }
    if (keys.size === 0) throw new KeySetFetchError('the key set holds no RSA signing key', false, 'keys');
    return { keys, at: this.now() };
  }

  /** The `jwks_uri` of the issuer's discovery document (lib/auth/discovery.ts): OpenID Connect's, else RFC 8414's. */
  private async discoverJwksUrl(signal?: AbortSignal): Promise<string> {
    const issuer = 'issuer' in this.source ? this.source.issuer : '';
    const [openId, oauth] = discoveryUrls(issuer) as [string, string];
    let document = await this.fetchJson(openId, signal, 'discovery', 'the discovery document', true);
    if (document === ABSENT) document = await this.fetchJson(oauth, signal, 'discovery', 'the discovery document');
    try {
      return jwksUriOf(document, issuer);
    } catch (error) {
      if (error instanceof DiscoveryError) throw new KeySetFetchError(error.message, false, 'discovery');
      throw error;
    }
  }

  /**
   * GET `url` as JSON within `fetchTimeoutMs` and the caller's signal. With `absentIsAnswer`, an
   * answer saying the document is not there (discovery.ts isAbsentDocument) returns ABSENT.
   */
  private async fetchJson(
    url: string,
    signal: AbortSignal | undefined,
    step: FetchStep,
    what: string,
    absentIsAnswer = false,
  ): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.options.fetchTimeoutMs);
    const bound = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const response = await getText(url, bound);
      if (absentIsAnswer && isAbsentDocument(response.status)) return ABSENT;
      if (response.status !== 200) throw new KeySetFetchError(`${what} at ${url} answered ${response.status}`, false, step);
      try {
        return JSON.parse(response.text);
      } catch {
        throw new KeySetFetchError(`${what} at ${url} is not JSON`, false, step);
      }
    } catch (error) {
      if (error instanceof KeySetFetchError) throw error;
      if (bound.aborted) throw new KeySetFetchError(`${what} at ${url} did not answer in time`, true, step, { cause: error });
      throw new KeySetFetchError(`${what} at ${url} could not be reached`, false, step, { cause: error });
    }
  }
}

/** fetchJson's answer for a document that is not at the URL asked. */
const ABSENT = Symbol('absent');

/**
 * node:http taken as Node's own CommonJS module, not through an ES import: on Node 22 and later,
 * importing node:http as an ES module reads every export, and the WebSocket, CloseEvent and
 * MessageEvent ones load undici, fetch's HTTP client, at init: 25 to 33 ms of CPU of the
 * observations and authorizer bundles' import on Node 24 here, which Lambda's runtime does not load.
 */
const { get: httpGet } = process.getBuiltinModule('node:http');

/** Redirects a key set or discovery URL may take, as fetch would follow them (an issuer moving its keys). */
const MAX_REDIRECTS = 5;

/** The most of an answer read: a key set or discovery document is a few kilobytes; a larger answer is not one. */
const MAX_BODY_BYTES = 1_048_576;

/**
 * GET with node:http(s) rather than fetch: fetch loads its HTTP client (undici) on first use, which
 * cost every cold start 50 to 80 ms here, for one small request. Follows redirects as fetch does;
 * reads at most MAX_BODY_BYTES (an answer past it is no key set or discovery document, and is not
 * held in the function's memory); `signal` ends the request at any point.
 */
function getText(url: string, signal: AbortSignal, redirects = 0): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const get = target.protocol === 'https:' ? httpsGet : httpGet;
  return new Promise((resolve, reject) => {
    const request = get(target, { headers: { Accept: 'application/json' }, signal }, (response) => {
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (status >= 300 && status < 400 && location && redirects < MAX_REDIRECTS) {
        response.resume();
        resolve(getText(new URL(location, target).toString(), signal, redirects + 1));
        return;
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_BODY_BYTES) {
          request.destroy(new Error(`an answer over ${MAX_BODY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => resolve({ status, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/**
 * The function's key set, kept across invocations of a warm Lambda: a function has one issuer and
 * at most one JWKS_URL, so one set (and one discovery) per instance.
 */
let keySet: { id: string; keys: RemoteKeySet } | undefined;

/** The key set of the function's issuer: at JWKS_URL when it is set, else where its discovery document says; made on first use. */
export function remoteKeys(cfg: { jwtIssuer: string; jwksUrl?: string | undefined }): RemoteKeySet {
  const id = `${cfg.jwtIssuer} ${cfg.jwksUrl ?? ''}`;
  if (keySet?.id !== id) {
    keySet = { id, keys: new RemoteKeySet(cfg.jwksUrl !== undefined ? { jwksUrl: cfg.jwksUrl } : { issuer: cfg.jwtIssuer }) };
  }
  return keySet.keys;
}
