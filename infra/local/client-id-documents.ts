import { BlockList, isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import { readBoundedBody } from './listener-io.js';
import { LOOPBACK_NAMES } from './own-address.js';

/**
 * Client ID metadata documents: a client named by an `https` URL on a public name (or, for
 * development, an `http` URL on a loopback name) whose JSON describes it. oidc-provider fetches
 * these for https only, at every client lookup, the token endpoint's included; so the local server
 * fetches them itself, and only in the browser's authorization step (GET /oauth2/authorize), then
 * hands the client to oidc-provider's own client store, where the token endpoint finds it without
 * fetching anything.
 *
 * The URL is anyone's choice (a web page can send the browser to any authorization request), so
 * the fetch must not become a way to probe this machine or its network:
 * - `https` only for a name that is no loopback or private address literal (what is on this
 *   machine is reached by the development `http` on a loopback name, and nothing on a private
 *   network at all); a name is not resolved here, so one that resolves to such an address is not
 *   caught;
 * - bounded (16 KiB, 3 s, no redirect), one fetch per origin at a time, and a failure kept for a
 *   minute for its whole origin (another path on it is not fetched again);
 * - every failure, whatever it was (refused name, closed port, silent listener, bad answer, a
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
  return `The client ID metadata document at this client_id could not be used: it must be at an https URL on a public name (or http on localhost, 127.0.0.1 or [::1]) and answer 200 with JSON of at most 16 KiB within ${ms / 1000} s, without a redirect, naming its own URL as client_id and describing a public client.`;
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

/** Address literals an https document may not name: this machine, private networks, link-local, and the unspecified address. */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

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

/** Whether a document URL names a host it may be fetched from: http on a loopback name; https on any name but an address literal that is not public. */
export function isFetchableDocumentUrl(clientId: string): boolean {
  if (!isDocumentUrl(clientId)) return false;
  const url = new URL(clientId);
  if (url.protocol === 'http:') return LOOPBACK_NAMES.includes(url.hostname);
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(literal);
  if (family !== 0) return !NOT_PUBLIC.check(literal, family === 4 ? 'ipv4' : 'ipv6');
  return !LOOPBACK_NAMES.includes(url.hostname) && !url.hostname.endsWith('.localhost');
}

async function fetchDocument(url: string, withinMs: number): Promise<DocumentOutcome> {
  try {
    const response = await fetch(url, {
      headers: { Accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(withinMs),
    });
    if (response.status !== 200 || !response.body) {
      await response.body?.cancel();
      return { ok: false };
    }
    // Read no further than the bound: the URL is the caller's choice, and so is what it sends.
    const body: unknown = JSON.parse((await readBoundedBody(response.body, DOCUMENT_MAX_BYTES)).toString('utf8'));
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
    if (!isFetchableDocumentUrl(url)) return { ok: false };
    const { origin } = new URL(url);
    const before = inFlight.get(origin);
    const turn = (async (): Promise<DocumentOutcome> => {
      await before?.catch(() => undefined);
      if (failedOrigins.has(origin)) return { ok: false };
      const kept = documents.get(url);
      const outcome = kept ? { ok: true as const, metadata: kept } : await fetchDocument(url, failureAnswerMs);
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
