import { LRUCache } from 'lru-cache';
import { readBoundedBody } from './http.js';
import { LOOPBACK_NAMES } from './own-address.js';

/**
 * Client ID metadata documents: a client named by an `https` URL (or, for development, an `http`
 * URL on a loopback name) whose JSON describes it. oidc-provider fetches these for https only, at
 * every client lookup, the token endpoint's included; so the local server fetches them itself, and
 * only in the browser's authorization step (GET /oauth2/authorize), then hands the client to
 * oidc-provider's own client store, where the token endpoint finds it without fetching anything.
 * A fetch is bounded (size, time, no redirects), its outcome kept a while (a failure too, so a
 * page cannot scan ports through it), and a failure names no upstream detail.
 */

const DOCUMENT_MAX_BYTES = 16_384;
const FETCH_TIMEOUT_MS = 3_000;
const KEEP_MS = 5 * 60_000;
const KEEP_FAILURE_MS = 60_000;
const MAX_DOCUMENTS = 500;

/** The one sentence of every failure: what a document must be, nothing of what the URL answered. */
export const DOCUMENT_REFUSED =
  'The client ID metadata document at this client_id could not be used: it must answer 200 with JSON of at most 16 KiB within 3 s, without a redirect, naming its own URL as client_id and describing a public client.';

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

/** Whether a client_id is a URL this server fetches: https anywhere, or http on a loopback name; no userinfo, fragment or bare origin. */
export function isDocumentUrl(clientId: string): boolean {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.pathname === '/' || clientId.includes('#') || url.username !== '' || url.password !== '') return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_NAMES.includes(url.hostname));
}

async function fetchDocument(url: string, signal: AbortSignal): Promise<DocumentOutcome> {
  try {
    const response = await fetch(url, {
      headers: { Accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]),
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

export interface ClientIdDocuments {
  /** The document at `url`, fetched now or earlier (an outcome is kept 5 minutes, a failure 1). */
  load(url: string): Promise<DocumentOutcome>;
  /** Keeps a failure for `url`: a document that fetched but that the client store refused. */
  refuse(url: string): void;
}

export function clientIdDocuments(): ClientIdDocuments {
  const cache = new LRUCache<string, DocumentOutcome>({
    max: MAX_DOCUMENTS,
    ttl: KEEP_MS,
    fetchMethod: async (url, _stale, { signal, options }) => {
      const outcome = await fetchDocument(url, signal);
      if (!outcome.ok) options.ttl = KEEP_FAILURE_MS;
      return outcome;
    },
  });
  return {
    async load(url) {
      return (await cache.fetch(url)) ?? { ok: false };
    },
    refuse(url) {
      cache.set(url, { ok: false }, { ttl: KEEP_FAILURE_MS });
    },
  };
}
