import type { Settings } from '../config.js';
import { httpError } from '../errors.js';
import type { AdmittedOriginsCors } from '../middleware/cors.js';

/**
 * Cross-origin access to the MCP door (its function's answers; the preflights and the RFC 9728
 * documents are API Gateway's static answers, infra/static-answers.ts, with the same headers) for
 * browser-based clients, admitted by origin: the service's own (its public URL's) and those of
 * `MCP_ALLOWED_ORIGINS` (exact `scheme://host[:port]` strings, checked at start, lib/config.ts),
 * and nothing else: no origin is inferred from another (a deployment reached under several names
 * lists the others).
 * An admitted origin gets its answers readable (`Access-Control-Allow-Origin` naming it, never
 * `*`, the challenge and protocol headers exposed) and its preflights answered; any other origin
 * gets no `Access-Control-Allow-Origin`, so the browser keeps the answer from the page.
 * `Vary: Origin` on every answer, since the headers depend on it. The MCP function's chain writes
 * the headers (lib/middleware/cors.ts, @middy/http-cors) with mcpCorsRules, asking isAllowedOrigin
 * for each request.
 */

/**
 * The request headers an MCP client sends: the token, the JSON body, and the protocol's own
 * (`Mcp-Protocol-Version`; `Mcp-Method` and `Mcp-Name` in 2026-07-28). `Mcp-Session-Id` and
 * `Last-Event-ID` are left out: this server issues no session and opens no stream to resume.
 */
export const MCP_REQUEST_HEADERS = Object.freeze([
  'Authorization',
  'Content-Type',
  'Accept',
  'Mcp-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
]);

/** Answer headers a page must be able to read: the 401's challenge and the protocol version. */
export const MCP_EXPOSED_HEADERS = Object.freeze(['WWW-Authenticate', 'Mcp-Protocol-Version']);

/** The method a page may send to `/api/mcp` (GET and DELETE there are 405s: no stream, no session); GET, for the documents, needs no listing. */
export const MCP_METHODS = Object.freeze(['POST']);

/** How long a browser may keep a preflight's answer (Chromium keeps at most 2 hours). */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * The CORS headers of every answer at the door, whatever the origin (as @middy/http-cors writes
 * them for mcpCors below; the static answers, infra/static-answers.ts, write the same): what a page
 * may send and read, and `Vary: Origin`. An admitted origin's answers add `Access-Control-Allow-Origin`.
 */
export const MCP_CORS_HEADERS = Object.freeze({
  'Access-Control-Allow-Headers': MCP_REQUEST_HEADERS.join(', '),
  'Access-Control-Allow-Methods': MCP_METHODS.join(', '),
  Vary: 'Origin',
  'Access-Control-Expose-Headers': MCP_EXPOSED_HEADERS.join(', '),
  'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
});

/** The browser origins the service admits: its public URL's, and those of MCP_ALLOWED_ORIGINS. */
export function admittedOrigins(cfg: Pick<Settings, 'publicUrl' | 'mcpAllowedOrigins'>): readonly string[] {
  return [...new Set([new URL(cfg.publicUrl).origin, ...cfg.mcpAllowedOrigins])];
}

/** True when a browser's `Origin` is one the service admits (admittedOrigins). */
export function isAllowedOrigin(origin: string | undefined, cfg: Pick<Settings, 'publicUrl' | 'mcpAllowedOrigins'>): origin is string {
  return origin !== undefined && admittedOrigins(cfg).includes(origin);
}

/** The one sentence of the 403 to a page of an origin the service does not admit. */
export const FOREIGN_ORIGIN_REFUSAL = 'Requests from this Origin are not allowed; set MCP_ALLOWED_ORIGINS to admit it.';

/** Servers must refuse a browser's request from an origin they do not serve (DNS rebinding): 403. */
export function assertAllowedOrigin(origin: string | undefined, cfg: Pick<Settings, 'publicUrl' | 'mcpAllowedOrigins'>): void {
  if (origin !== undefined && !isAllowedOrigin(origin, cfg)) throw httpError(403, FOREIGN_ORIGIN_REFUSAL);
}

/** The door's CORS rules for its function's chain (lib/middleware/cors.ts): the origins it admits, and what their pages may send and read. */
export function mcpCorsRules(cfg: Pick<Settings, 'publicUrl' | 'mcpAllowedOrigins'>): AdmittedOriginsCors {
  return {
    isAllowed: (origin) => isAllowedOrigin(origin, cfg),
    methods: MCP_METHODS,
    headers: MCP_REQUEST_HEADERS,
    exposeHeaders: MCP_EXPOSED_HEADERS,
    maxAgeSeconds: PREFLIGHT_MAX_AGE_SECONDS,
  };
}
