import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import pLimit from 'p-limit';
import { callerFromAuthorizer } from '../auth/caller.js';
import { bearerToken } from '../auth/verify.js';
import { config } from '../config.js';
import { ForbiddenError, MethodNotAllowedError, NotFoundError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { headerValues, singleHeader } from '../rest-event.js';
import { isAllowedOrigin } from './cors.js';
import { UPSTREAM_CONCURRENCY } from './limits.js';
import { eventBodyBytes, oversizeRefusal } from './request-body.js';
import { metadataDoorOf, protectedResourceMetadata } from './resource-metadata.js';
import { serveMcpRequest } from './server.js';

/**
 * The MCP door as the public REST API (payload 1.0) reaches it: `POST /api/mcp` behind the token
 * authorizer with the MCP audience, and the RFC 9728 metadata of both doors without one. The event
 * becomes a web-standard Request for the SDK and its Response a Lambda result; everything else
 * about the event stays here.
 */

const MCP_PATH = '/api/mcp';
/** Headers that describe the original connection, not the message; the Request recomputes what it needs. */
const HOP_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * The deadline of one MCP request's upstream calls (token exchange, the private operation, the
 * store): the invocation's deadline or, when sooner, `UPSTREAM_TIMEOUT_MS`. One that passes is a
 * tool error ("did not answer in time"), never a gateway timeout.
 */
export function upstreamDeadline(invocation: AbortSignal): AbortSignal {
  return AbortSignal.any([invocation, AbortSignal.timeout(config().upstreamTimeoutMs)]);
}

function bodyOf(event: APIGatewayProxyEvent): string {
  if (event.body === undefined || event.body === null) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

function webRequest(event: APIGatewayProxyEvent, body: string): Request {
  const headers = new Headers();
  for (const name of new Set(Object.keys({ ...event.headers, ...event.multiValueHeaders }))) {
    if (HOP_HEADERS.has(name.toLowerCase())) continue;
    for (const value of headerValues(event, name)) headers.append(name, value);
  }
  // API Gateway always names the host; a reserved name stands in for an event without one.
  const host = event.requestContext.domainName || 'host.invalid';
  const query = new URLSearchParams();
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {}))
    for (const value of values ?? []) query.append(name, value);
  const search = query.toString();
  return new Request(`https://${host}${event.path}${search ? `?${search}` : ''}`, { method: 'POST', headers, body });
}

async function lambdaResult(response: Response): Promise<APIGatewayProxyResult> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if ((headers['content-type'] ?? '').startsWith('text/event-stream')) {
    // A buffered Lambda answer cannot carry a stream; the server is configured never to open one.
    await response.body?.cancel();
    throw new Error('the MCP server answered with a stream');
  }
  return { statusCode: response.status, headers: { 'Cache-Control': 'no-store', ...headers }, body: await response.text() };
}

function metadataResult(door: 'inventory' | 'mcp'): APIGatewayProxyResult {
  return {
    statusCode: 200,
    // Public and the same for everyone; a browser page reads it from an admitted origin (lib/mcp/cors.ts).
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'public, max-age=3600' },
    body: JSON.stringify(protectedResourceMetadata(config(), door)),
  };
}

/** Servers must refuse a browser's request from an origin they do not serve (DNS rebinding): 403. */
function assertAllowedOrigin(origin: string | undefined): void {
  if (origin === undefined) return;
  if (!isAllowedOrigin(origin, config())) {
    throw new ForbiddenError('Requests from this Origin are not allowed; set MCP_ALLOWED_ORIGINS to admit it.');
  }
}

/**
 * A browser's preflight: 204, which the CORS middleware (lib/mcp/cors.ts) completes for an admitted
 * origin with the methods and MCP headers it may send; at `/api/mcp` from another origin a 403, so
 * the browser refuses the request.
 */
function preflightResult(path: string, origin: string | undefined): APIGatewayProxyResult {
  if (metadataDoorOf(path)) return { statusCode: 204, body: '', headers: {} };
  if (origin === undefined) return { statusCode: 204, body: '', headers: { Allow: 'OPTIONS, POST' } };
  assertAllowedOrigin(origin);
  return { statusCode: 204, body: '', headers: { 'Cache-Control': 'no-store' } };
}

/**
 * One request at the MCP door: the metadata documents, a browser's preflight (OPTIONS, no token),
 * `POST /api/mcp` for a verified caller (the tenant from the token's claims, the token itself kept
 * only to be exchanged), and 405 for the other methods on the path (no SSE stream, no session to
 * delete). A 401 of its own carries the Bearer challenge with `resource_metadata`.
 */
export async function serveMcpDoor(event: APIGatewayProxyEvent, deadline: AbortSignal): Promise<APIGatewayProxyResult> {
  const method = event.httpMethod.toUpperCase();
  // The route's resource, not the path: a custom domain's base path may stand before it.
  const path = event.resource;
  const origin = singleHeader(event, 'origin', 'Origin');
  if (method === 'OPTIONS' && (path === MCP_PATH || metadataDoorOf(path))) return preflightResult(path, origin);
  const metadataDoor = metadataDoorOf(path);
  if (metadataDoor) {
    if (method !== 'GET' && method !== 'HEAD') throw new MethodNotAllowedError('Only GET is served here.', ['GET']);
    return metadataResult(metadataDoor);
  }
  if (path !== MCP_PATH) throw new NotFoundError('No such route.');
  if (method !== 'POST') {
    throw new MethodNotAllowedError('This MCP server is stateless: it answers POST only (no event stream, no session to delete).', [
      'POST',
    ]);
  }
  assertAllowedOrigin(origin);
  // The authorizer verified the token; the handler reads the caller it handed over, and keeps the
  // token only to exchange it (never to pass it on).
  const caller = callerFromAuthorizer(event, 'mcp');
  const token = bearerToken(singleHeader(event, 'authorization', 'Authorization'));
  logger.appendKeys({ tenant: caller.tenantId, subject: caller.subject });
  // Measured on the event's own string, before it is decoded or parsed (lib/mcp/request-body.ts).
  const bytes = eventBodyBytes(event.body, event.isBase64Encoded);
  const tooLarge = oversizeRefusal(bytes);
  if (tooLarge) {
    logger.info('request body refused: too large', { bytes });
    return lambdaResult(tooLarge);
  }
  const body = bodyOf(event);
  // One request's upstream reads share a small concurrency bound (lib/mcp/limits.ts).
  const upstream = pLimit(UPSTREAM_CONCURRENCY);
  const response = await serveMcpRequest(webRequest(event, body), body, {
    ...caller,
    token,
    tokenExpiresAt: caller.expiresAt * 1000,
    signal: deadline,
    upstream: (read) => upstream(read),
  });
  return lambdaResult(response);
}
