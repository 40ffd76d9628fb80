import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { readBoundedBody } from './listener-io.js';
import { LOOPBACK_NAMES } from './own-address.js';

/**
 * Client ID metadata documents: a client named by an `https` URL whose JSON describes it.
 * oidc-provider fetches these for https only, at every client lookup, the token endpoint's
 * included; so the local server fetches them itself, and only in the browser's authorization step
 * (GET /oauth2/authorize), then hands the client to oidc-provider's own client store, where the
 * token endpoint finds it without fetching anything.
 *
 * The URL is anyone's choice (a web page can send the browser to any authorization request, from
 * an `<img>`), so the fetch must not become a way to reach this machine or its network: every
 * listener of the stack admits a program's request with the right `Host` (a Runtime API's next
 * event included), and so may any other service on loopback or the LAN. So:
 * - `https` only, to a public address: an address literal that is loopback, private, link-local,
 *   unique-local, shared, multicast, reserved, unspecified or IPv4-mapped is refused before any
 *   connection; a name is resolved as the connection is made, and the connection goes to the
 *   address checked, or nowhere (request-filtering-agent checks each address the name resolves
 *   to inside the connection's own lookup, so a name that resolves to such an address, or one that
 *   rebinds to it between two lookups, never gets a connection); `localhost` and `*.localhost` are
 *   refused by name;
 * - except an origin CLIENT_ID_DOCUMENT_DEV_ORIGINS names (a client's document served on this
 *   machine while it is developed): that exact origin, http or https, is fetched as it is. None is
 *   named by default;
 * - bounded (16 KiB, 3 s, no redirect), one fetch per origin at a time, and a failure kept for a
 *   minute for its whole origin (another path on it is not fetched again);
 * - every failure, whatever it was (refused address, closed port, silent listener, bad answer, a
 *   failure kept from before), is answered after the same fixed time from the request's start,
 *   and in the same sentence, so neither the answer nor its time tells anything of a port.
 * A document that was used is kept five minutes.
 */

const DOCUMENT_MAX_BYTES = 16_384;
/** How long every failure takes to be answered, and the most a fetch (answer and body) may take. */
export const FAILURE_ANSWER_MS = 3_000;
const KEEP_MS = 5 * 60_000;
const KEEP_FAILURE_MS = 60_000;
const MAX_DOCUMENTS = 500;
const MAX_FAILED_ORIGINS = 10_000;

/** The one sentence of every failure, for documents fetched within `ms`: what a document must be, nothing of what the URL answered. */
export function documentRefused(ms = FAILURE_ANSWER_MS): string {
  return `The client ID metadata document at this client_id could not be used: it must be at an https URL on a public address (or at an origin CLIENT_ID_DOCUMENT_DEV_ORIGINS names, for development) and answer 200 with JSON of at most 16 KiB within ${ms / 1000} s, without a redirect, naming its own URL as client_id and describing a public client.`;
}

/** The sentence of every failure with the server's own time (FAILURE_ANSWER_MS). */
export const DOCUMENT_REFUSED = documentRefused();

/** The client metadata a document may give (the rest is ignored), as oidc-provider's client store takes it. */
const KEPT_FIELDS = [
  'client_name',
  'client_uri',
  'logo_uri',
  'redirect_uris',
  'grant_types',
  'response_types',
  'software_id',
  'software_version',
];

export type DocumentOutcome = { ok: true; metadata: Record<string, unknown> } | { ok: false };

/** Whether a client_id names a document (an http or https URL with a path, no userinfo or fragment): such a client_id is only ever a document. */
export function isDocumentUrl(clientId: string): boolean {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.pathname === '/' || clientId.includes('#') || url.username !== '' || url.password !== '') return false;
  return url.protocol === 'https:' || url.protocol === 'http:';
}

/** Whether an address is public: the one rule for address literals here and for resolved names in request-filtering-agent (ipaddr.js's `unicast`). */
function isPublicAddress(address: string): boolean {
  return ipaddr.isValid(address) && ipaddr.parse(address).range() === 'unicast';
}

/**
 * How a document URL may be fetched: `development` from an origin `devOrigins` names, as it is;
 * `public` over https to a public address (a name's addresses checked as it is connected to);
 * undefined: not at all.
 */
export function documentFetch(clientId: string, devOrigins: readonly string[] = []): 'development' | 'public' | undefined {
  if (!isDocumentUrl(clientId)) return undefined;
  const url = new URL(clientId);
  if (devOrigins.includes(url.origin)) return 'development';
  if (url.protocol !== 'https:') return undefined;
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal) !== 0) return isPublicAddress(literal) ? 'public' : undefined;
  if (LOOPBACK_NAMES.includes(url.hostname) || url.hostname.endsWith('.localhost')) return undefined;
  return 'public';
}

/** The connections of `public` fetches: each to an address it checked public, or to none. */
const publicOnly = new RequestFilteringHttpsAgent();

/** One GET of the document, answered with its status and body as they come (the body not read yet). */
function get(url: URL, how: 'development' | 'public', signal: AbortSignal): Promise<IncomingMessage> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { headers: { Accept: 'application/json' }, signal, agent: how === 'public' ? publicOnly : false }, resolve);
    req.on('error', reject);
    req.end();
  });
}

async function fetchDocument(url: string, how: 'development' | 'public', withinMs: number): Promise<DocumentOutcome> {
  try {
    const response = await get(new URL(url), how, AbortSignal.timeout(withinMs));
    // No redirect is followed: a 3xx is a failure like any answer but 200.
    if (response.statusCode !== 200) {
      response.destroy();
      return { ok: false };
    }
    // Read no further than the bound: the URL is the caller's choice, and so is what it sends.
    const body: unknown = JSON.parse((await readBoundedBody(response, DOCUMENT_MAX_BYTES)).toString('utf8'));
    if (!body || typeof body !== 'object' || Array.isArray(body)) return { ok: false };
    const document = body as Record<string, unknown>;
    const method = document.token_endpoint_auth_method ?? 'none';
    if (document.client_id !== url || method !== 'none' || 'client_secret' in document) return { ok: false };
    const metadata: Record<string, unknown> = { client_id: url, token_endpoint_auth_method: 'none' };
    for (const field of KEPT_FIELDS) if (document[field] !== undefined) metadata[field] = document[field];
    return { ok: true, metadata };
  } catch {
    return { ok: false };
  }
}

export interface ClientIdDocumentsOptions {
  /** Whether the client store takes a fetched document's client (oidc-provider's own checks); a refusal is a failure like any. */
  accept(url: string, metadata: Record<string, unknown>): Promise<boolean>;
  /**
   * The fixed time of every failure, and the most a fetch may take (default FAILURE_ANSWER_MS). The
   * tests shorten it, so their failures do not each wait 3 s; whatever it is, every failure takes it.
   */
  failureAnswerMs?: number;
  /** The origins fetched as they are though they may be on this machine or a private network (CLIENT_ID_DOCUMENT_DEV_ORIGINS; default none). */
  devOrigins?: () => readonly string[];
}

export interface ClientIdDocuments {
  /** The client of the document at `url`, fetched now or earlier and accepted; a failure is answered failureAnswerMs after the call. */
  load(url: string): Promise<DocumentOutcome>;
}

export function clientIdDocuments(options: ClientIdDocumentsOptions): ClientIdDocuments {
  const failureAnswerMs = options.failureAnswerMs ?? FAILURE_ANSWER_MS;
  const documents = new LRUCache<string, Record<string, unknown>>({ max: MAX_DOCUMENTS, ttl: KEEP_MS });
  const failedOrigins = new LRUCache<string, true>({ max: MAX_FAILED_ORIGINS, ttl: KEEP_FAILURE_MS });
  /** The fetch in flight for each origin: the next one for that origin waits for it. */
  const inFlight = new Map<string, Promise<unknown>>();

  const attempt = async (url: string): Promise<DocumentOutcome> => {
    const how = documentFetch(url, options.devOrigins?.() ?? []);
    if (how === undefined) return { ok: false };
    const { origin } = new URL(url);
    const before = inFlight.get(origin);
    const turn = (async (): Promise<DocumentOutcome> => {
      await before?.catch(() => undefined);
      if (failedOrigins.has(origin)) return { ok: false };
      const kept = documents.get(url);
      const outcome = kept ? { ok: true as const, metadata: kept } : await fetchDocument(url, how, failureAnswerMs);
      if (outcome.ok && (await options.accept(url, outcome.metadata).catch(() => false))) {
        documents.set(url, outcome.metadata);
        return outcome;
      }
      documents.delete(url);
      failedOrigins.set(origin, true);
      return { ok: false };
    })();
    inFlight.set(origin, turn);
    try {
      return await turn;
    } finally {
      if (inFlight.get(origin) === turn) inFlight.delete(origin);
    }
  };

  return {
    async load(url) {
      const answerAt = performance.now() + failureAnswerMs;
      const outcome = await attempt(url);
      if (!outcome.ok) await new Promise((resolve) => setTimeout(resolve, Math.max(0, answerAt - performance.now())));
      return outcome;
    },
  };
}
