import { randomBytes, timingSafeEqual } from 'node:crypto';
import { BodyTooLargeError, readBoundedBody } from './http.js';

/**
 * The clients of the local authorization server: those that registered themselves (RFC 7591
 * dynamic client registration), those named by a client ID metadata document (an `https` URL as
 * `client_id`, whose JSON describes the client; for development also an `http` URL on this
 * machine), and the MCP broker, the one confidential client preconfigured for the token exchange.
 * Kept in memory: a restart forgets registrations, and clients register again (MCP clients do so
 * on `invalid_client`).
 */

export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';
export type UserGrant = 'authorization_code' | 'refresh_token';

export interface OAuthClient {
  client_id: string;
  client_secret?: string | undefined;
  token_endpoint_auth_method: ClientAuthMethod;
  redirect_uris: string[];
  grant_types: UserGrant[];
  client_name?: string | undefined;
  /** How the server knows the client. */
  source: 'registration' | 'metadata-document';
}

/** An RFC 7591 / RFC 6749 error: `error` code and one sentence. */
export class ClientError extends Error {
  override name = 'ClientError';
  constructor(
    readonly error: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const MAX_CLIENTS = 1_000;
const DOCUMENT_MAX_BYTES = 65_536;
const DOCUMENT_TIMEOUT_MS = 5_000;
const DOCUMENT_CACHE_MS = 5 * 60_000;
/** Schemes a redirect may never use: they run or read something in the browser itself. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:', 'ftp:', 'ws:', 'wss:']);

/** A loopback host, where plain http is acceptable (RFC 8252 §7.3: the redirect stays on this machine). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]' || hostname === '::1';
}

/**
 * A redirect URI a client may register: absolute, no fragment; `https`, `http` on a loopback host,
 * or a native app's private-use scheme (RFC 8252 §7.1, e.g. `cursor://…`).
 */
function assertRedirectUri(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2_000)
    throw new ClientError('invalid_redirect_uri', 'Each redirect URI must be a string of at most 2000 characters.');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ClientError('invalid_redirect_uri', `The redirect URI ${JSON.stringify(value.slice(0, 100))} is not an absolute URL.`);
  }
  if (url.hash !== '' || value.includes('#')) throw new ClientError('invalid_redirect_uri', 'A redirect URI may not have a fragment.');
  if (FORBIDDEN_SCHEMES.has(url.protocol)) throw new ClientError('invalid_redirect_uri', `A redirect URI may not use ${url.protocol}.`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new ClientError(
      'invalid_redirect_uri',
      'A redirect URI with http must point at this machine (localhost, 127.0.0.1 or [::1]); use https otherwise.',
    );
  }
  return value;
}

/**
 * Whether `given` is one of the client's redirect URIs: exactly, or, for an `http` loopback URI,
 * with any port (RFC 8252 §7.3: native apps get an ephemeral port at run time).
 */
export function redirectUriMatches(client: OAuthClient, given: string): boolean {
  if (client.redirect_uris.includes(given)) return true;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) return false;
  return client.redirect_uris.some((registered) => {
    try {
      const r = new URL(registered);
      return r.protocol === 'http:' && r.hostname === url.hostname && r.pathname === url.pathname && r.search === url.search;
    } catch {
      return false;
    }
  });
}

function stringList(value: unknown, field: string, fallback: string[]): string[] {
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new ClientError('invalid_client_metadata', `${field} must be an array of strings.`);
  return value as string[];
}

/** The client metadata both ways of knowing a client share, validated (RFC 7591 §2). */
function clientMetadata(body: Record<string, unknown>, defaultAuth: ClientAuthMethod): Omit<OAuthClient, 'client_id' | 'source'> {
  const redirects = stringList(body.redirect_uris, 'redirect_uris', []);
  if (redirects.length === 0 || redirects.length > 10)
    throw new ClientError('invalid_redirect_uri', 'redirect_uris must list 1 to 10 redirect URIs.');
  const auth = body.token_endpoint_auth_method ?? defaultAuth;
  if (auth !== 'none' && auth !== 'client_secret_basic' && auth !== 'client_secret_post') {
    throw new ClientError('invalid_client_metadata', 'token_endpoint_auth_method must be none, client_secret_basic or client_secret_post.');
  }
  const grants = stringList(body.grant_types, 'grant_types', ['authorization_code']);
  if (!grants.includes('authorization_code') || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    throw new ClientError(
      'invalid_client_metadata',
      'grant_types must include authorization_code and may add refresh_token; no other grant is offered to clients.',
    );
  }
  const responses = stringList(body.response_types, 'response_types', ['code']);
  if (responses.length !== 1 || responses[0] !== 'code')
    throw new ClientError('invalid_client_metadata', 'response_types must be ["code"].');
  const name = body.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.length > 200))
    throw new ClientError('invalid_client_metadata', 'client_name must be a string of at most 200 characters.');
  return {
    token_endpoint_auth_method: auth,
    redirect_uris: redirects.map(assertRedirectUri),
    grant_types: grants as UserGrant[],
    client_name: name as string | undefined,
  };
}

/** A client secret compared in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The client credentials a token request presents: `client_secret_basic` (RFC 6749 §2.3.1: each
 * part form-urlencoded inside the base64) or the form's `client_id` and `client_secret`.
 * `ambiguous`: a secret both ways (one method only, §2.3); `malformed`: a Basic header that does
 * not decode. The one reading of every grant of the local token endpoint.
 */
export function presentedCredentials(
  form: URLSearchParams,
  authorization: string | undefined,
): { id?: string; secret?: string } | 'ambiguous' | 'malformed' {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  const postedSecret = form.get('client_secret') ?? undefined;
  if (!basic) {
    const id = form.get('client_id') ?? undefined;
    return { ...(id !== undefined ? { id } : {}), ...(postedSecret !== undefined ? { secret: postedSecret } : {}) };
  }
  if (postedSecret !== undefined) return 'ambiguous';
  const decoded = Buffer.from(basic[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const unform = (v: string): string => decodeURIComponent(v.replace(/\+/g, ' '));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

/** A URL client_id this server fetches: https anywhere, or (local development) http on this machine. */
export function isMetadataDocumentUrl(clientId: string): boolean {
  try {
    const url = new URL(clientId);
    if (url.pathname === '/' || url.hash !== '' || url.username !== '' || url.password !== '') return false;
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  } catch {
    return false;
  }
}

export class ClientRegistry {
  private readonly registered = new Map<string, OAuthClient>();
  private readonly documents = new Map<string, { client: OAuthClient; fetchedAt: number }>();

  /** RFC 7591 §3.1: registers a client from its metadata; a secret only for a client that authenticates. */
  register(body: unknown): OAuthClient & { client_id_issued_at: number; client_secret_expires_at?: number } {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new ClientError('invalid_client_metadata', 'The registration body must be a JSON object.');
    const metadata = clientMetadata(body as Record<string, unknown>, 'client_secret_basic');
    const client: OAuthClient = {
      client_id: `local-${randomBytes(12).toString('base64url')}`,
      ...metadata,
      ...(metadata.token_endpoint_auth_method === 'none' ? {} : { client_secret: randomBytes(32).toString('base64url') }),
      source: 'registration',
    };
    this.registered.set(client.client_id, client);
    while (this.registered.size > MAX_CLIENTS) this.registered.delete(this.registered.keys().next().value as string);
    return {
      ...client,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      ...(client.client_secret ? { client_secret_expires_at: 0 } : {}),
    };
  }

  /** The client named by `clientId`: registered, or described by the metadata document at that URL. */
  async find(clientId: string): Promise<OAuthClient | undefined> {
    const known = this.registered.get(clientId);
    if (known) return known;
    if (!isMetadataDocumentUrl(clientId)) return undefined;
    const cached = this.documents.get(clientId);
    if (cached && Date.now() - cached.fetchedAt < DOCUMENT_CACHE_MS) return cached.client;
    const client = await fetchMetadataDocument(clientId);
    this.documents.set(clientId, { client, fetchedAt: Date.now() });
    while (this.documents.size > MAX_CLIENTS) this.documents.delete(this.documents.keys().next().value as string);
    return client;
  }

  /**
   * The client of a token request, authenticated as it registered: a public client by its
   * `client_id` alone, a confidential one by its secret (basic or post, one way only).
   */
  async authenticate(form: URLSearchParams, authorization: string | undefined): Promise<OAuthClient> {
    const presented = presentedCredentials(form, authorization);
    if (presented === 'ambiguous') throw new ClientError('invalid_request', 'Authenticate the client one way only.');
    if (presented === 'malformed') throw new ClientError('invalid_client', 'Client authentication failed.', 401);
    const { id, secret } = presented;
    if (!id) throw new ClientError('invalid_client', 'client_id is required.', 401);
    let client: OAuthClient | undefined;
    try {
      client = await this.find(id);
    } catch (error) {
      throw new ClientError('invalid_client', (error as Error).message, 401);
    }
    if (!client) throw new ClientError('invalid_client', 'The client is not registered here; register it first.', 401);
    if (client.token_endpoint_auth_method === 'none') {
      if (secret !== undefined) throw new ClientError('invalid_client', 'This client registered as a public client: send no secret.', 401);
      return client;
    }
    if (secret === undefined || !client.client_secret || !sameSecret(secret, client.client_secret)) {
      throw new ClientError('invalid_client', 'Client authentication failed.', 401);
    }
    return client;
  }
}

/**
 * Fetches and checks a client ID metadata document: JSON of at most 64 KiB, no redirect, within
 * 5 s, whose `client_id` is the URL it was fetched from, describing a public client.
 */
async function fetchMetadataDocument(url: string): Promise<OAuthClient> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { Accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(DOCUMENT_TIMEOUT_MS),
    });
  } catch {
    throw new ClientError('invalid_client', 'The client ID metadata document could not be fetched.');
  }
  if (!response.ok) throw new ClientError('invalid_client', `The client ID metadata document answered ${response.status}.`);
  let text: string;
  try {
    // Read no further than the bound: the URL is the caller's choice, and so is what it sends.
    text = response.body ? (await readBoundedBody(response.body, DOCUMENT_MAX_BYTES)).toString('utf8') : '';
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      throw new ClientError('invalid_client', `The client ID metadata document answered ${response.status} with more than 64 KiB.`);
    throw new ClientError('invalid_client', 'The client ID metadata document could not be fetched.');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ClientError('invalid_client', 'The client ID metadata document is not JSON.');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body) || (body as { client_id?: unknown }).client_id !== url) {
    throw new ClientError('invalid_client', 'The client ID metadata document must name its own URL as client_id.');
  }
  const metadata = clientMetadata(body as Record<string, unknown>, 'none');
  if (metadata.token_endpoint_auth_method !== 'none') {
    throw new ClientError(
      'invalid_client',
      'A client known by its metadata document must be a public client (token_endpoint_auth_method none).',
    );
  }
  return { client_id: url, ...metadata, source: 'metadata-document' };
}
