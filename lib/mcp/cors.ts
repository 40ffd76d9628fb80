import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { config } from '../config.js';
import { headerValues } from '../rest-event.js';

/**
 * Cross-origin access to the MCP door for browser-based clients, admitted by origin
 * (`MCP_ALLOWED_ORIGINS`, exact `scheme://host[:port]` strings). An admitted origin gets the
 * preflight answered and its answers readable (`Access-Control-Allow-Origin` naming it, the
 * challenge and protocol headers exposed); any other origin gets no CORS header at all, so the
 * browser keeps the answer from the page. `Vary: Origin` on every answer of `/api/mcp`, since
 * the headers depend on it.
 *
 * Ours rather than @middy/http-cors: that one fixes its origins when the module loads (ours are
 * read from the configuration per request) and adds the preflight's headers to every answer.
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

/** The methods a page may send to `/api/mcp` (GET and DELETE are 405s: no stream, no session). */
export const MCP_METHODS = Object.freeze(['POST']);

/** How long a browser may keep a preflight's answer (Chromium keeps at most 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * True when a browser's `Origin` is one the door admits: a listed one, or the door's own (the
 * origin of PUBLIC_URL). A page on the door's own origin is the service's own: on AWS the API
 * serves no page; locally it is the MCP App preview host (infra/local/mcp-app-preview.ts).
 */
export function isAllowedOrigin(origin: string | undefined): origin is string {
  if (origin === undefined) return false;
  const cfg = config();
  return cfg.mcpAllowedOrigins.includes(origin) || origin === new URL(cfg.publicUrl).origin;
}

/** The headers of an answer to a preflight from an admitted origin (the middleware adds the origin). */
export function preflightHeaders(): Record<string, string> {
  return {
    'Access-Control-Allow-Methods': MCP_METHODS.join(', '),
    'Access-Control-Allow-Headers': MCP_REQUEST_HEADERS.join(', '),
    'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
  };
}

type DoorRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult | undefined, Error>;

function withVary(current: unknown, name: string): string {
  const parts = typeof current === 'string' && current !== '' ? current.split(',').map((p) => p.trim()) : [];
  return parts.some((p) => p.toLowerCase() === name.toLowerCase()) ? parts.join(', ') : [...parts, name].join(', ');
}

/**
 * The door's CORS middleware: on every answer of `/api/mcp`, success or failure, `Vary: Origin`,
 * and for an admitted origin `Access-Control-Allow-Origin` and `-Expose-Headers`. Registered
 * before the failure handler, so it also runs on the text/plain failures that handler writes.
 */
export function mcpCors(mcpPath = '/api/mcp'): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult | undefined, Error> {
  const addCorsHeaders = async (request: DoorRequest): Promise<void> => {
    const response = request.response;
    if (!response || request.event.resource !== mcpPath) return;
    const headers: Record<string, string | number | boolean> = { ...response.headers };
    headers.Vary = withVary(headers.Vary ?? headers.vary, 'Origin');
    delete headers.vary;
    // One Origin only: a repeated one is answered 400 by the door, and admits nobody here.
    const origins = headerValues(request.event, 'origin');
    const origin = origins.length === 1 ? origins[0] : undefined;
    if (isAllowedOrigin(origin)) {
      headers['Access-Control-Allow-Origin'] = origin;
      headers['Access-Control-Expose-Headers'] = MCP_EXPOSED_HEADERS.join(', ');
    }
    response.headers = headers;
  };
  return { after: addCorsHeaders, onError: addCorsHeaders };
}
