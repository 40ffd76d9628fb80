import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import pLimit from 'p-limit';
import { bearerChallenge } from '../auth/challenge.js';
import { identityFromClaims, type CallerIdentity } from '../auth/identity.js';
import { bearerToken } from '../auth/verify.js';
import { config } from '../config.js';
import { ForbiddenError, HttpError, MethodNotAllowedError, NotFoundError, UnauthorizedError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { isAllowedOrigin, preflightHeaders } from './cors.js';
import { UPSTREAM_CONCURRENCY } from './limits.js';
import { protectedResourceMetadata, RESOURCE_METADATA_PATHS, resourceMetadataUrl } from './resource-metadata.js';
import { serveMcpRequest } from './server.js';

/**
 * The MCP door as API Gateway's HTTP API (payload 2.0) reaches it: `POST /api/mcp` behind the JWT
 * authorizer with the MCP audience, and the RFC 9728 metadata without one. The event becomes a
 * web-standard Request for the SDK and its Response a Lambda result; everything else about the
 * event stays here.
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

function bodyOf(event: APIGatewayProxyEventV2WithJWTAuthorizer): string {
  if (event.body === undefined || event.body === null) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

function webRequest(event: APIGatewayProxyEventV2WithJWTAuthorizer, body: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined && !HOP_HEADERS.has(name.toLowerCase())) headers.set(name, value);
  }
  const host = event.requestContext.domainName || 'localhost';
  const query = event.rawQueryString ? `?${event.rawQueryString}` : '';
  return new Request(`https://${host}${event.rawPath}${query}`, { method: 'POST', headers, body });
}

async function lambdaResult(response: Response): Promise<APIGatewayProxyStructuredResultV2> {
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

function metadataResult(): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'public, max-age=3600',
      // Public and the same for everyone: browser-based clients may read it from any origin.
      'Access-Control-Allow-Origin': '*',
    },
    body: JSON.stringify(protectedResourceMetadata(config())),
  };
}

/** Servers must refuse a browser's request from an origin they do not serve (DNS rebinding): 403. */
function assertAllowedOrigin(origin: string | undefined): void {
  if (origin === undefined) return;
  if (!isAllowedOrigin(origin)) {
    throw new ForbiddenError('Requests from this Origin are not allowed; set MCP_ALLOWED_ORIGINS to admit it.');
  }
}

/**
 * A browser's preflight: for `/api/mcp`, from an admitted origin, the methods and MCP headers it
 * may send (lib/mcp/cors.ts adds the origin); from another origin a 403 without CORS headers, so
 * the browser refuses the request. The metadata documents are public: any origin may read them,
 * with the protocol header MCP clients send along.
 */
function preflightResult(path: string, origin: string | undefined): APIGatewayProxyStructuredResultV2 {
  if (RESOURCE_METADATA_PATHS.includes(path)) {
    return {
      statusCode: 204,
      headers: { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET', 'Access-Control-Allow-Headers': 'Mcp-Protocol-Version', 'Access-Control-Max-Age': '600' },
    };
  }
  if (origin === undefined) return { statusCode: 204, headers: { Allow: 'OPTIONS, POST' } };
  assertAllowedOrigin(origin);
  return { statusCode: 204, headers: { 'Cache-Control': 'no-store', ...preflightHeaders() } };
}

/**
 * A 401 of the door itself (no claims reached it, or no bearer token: the authorizer in front
 * normally answers those) carries the challenge that leads a client to sign-in: where the
 * resource's metadata is, and `error="invalid_token"` when a token was presented.
 */
function withChallenge(error: unknown, tokenPresented: boolean): unknown {
  if (!(error instanceof UnauthorizedError)) return error;
  const location = resourceMetadataUrl(config().mcpAudience);
  if (location === undefined) return error;
  const challenge = bearerChallenge({ resourceMetadata: location, ...(tokenPresented ? { error: 'invalid_token', description: error.message } : {}) });
  return new HttpError(401, error.message, { cause: error, headers: { 'WWW-Authenticate': challenge } });
}

/** The caller the authorizer verified, and the user's token (kept only to be exchanged). */
function verifiedCaller(event: APIGatewayProxyEventV2WithJWTAuthorizer): CallerIdentity & { token: string; tokenExpiresAt: number | undefined } {
  const claims = event.requestContext.authorizer?.jwt?.claims;
  const authorization = event.headers?.authorization;
  try {
    const token = bearerToken(authorization);
    const caller = identityFromClaims(claims, config().tenantClaim);
    const exp = Number(claims?.exp);
    return { ...caller, token, tokenExpiresAt: Number.isFinite(exp) && exp > 0 ? exp * 1000 : undefined };
  } catch (error) {
    throw withChallenge(error, authorization !== undefined && authorization.trim() !== '');
  }
}

/**
 * One request at the MCP door: the metadata documents, a browser's preflight (OPTIONS, no token),
 * `POST /api/mcp` for a verified caller (the tenant from the token's claims, the token itself kept
 * only to be exchanged), and 405 for the other methods on the path (no SSE stream, no session to
 * delete). A 401 of its own carries the Bearer challenge with `resource_metadata`.
 */
export async function serveMcpDoor(event: APIGatewayProxyEventV2WithJWTAuthorizer, deadline: AbortSignal): Promise<APIGatewayProxyStructuredResultV2> {
  const method = event.requestContext.http.method.toUpperCase();
  const path = event.rawPath;
  if (method === 'OPTIONS' && (path === MCP_PATH || RESOURCE_METADATA_PATHS.includes(path))) return preflightResult(path, event.headers?.origin);
  if (RESOURCE_METADATA_PATHS.includes(path)) {
    if (method !== 'GET' && method !== 'HEAD') throw new MethodNotAllowedError('Only GET is served here.', ['GET']);
    return metadataResult();
  }
  if (path !== MCP_PATH) throw new NotFoundError('No such route.');
  if (method !== 'POST') {
    throw new MethodNotAllowedError('This MCP server is stateless: it answers POST only (no event stream, no session to delete).', ['POST']);
  }
  assertAllowedOrigin(event.headers?.origin);
  const caller = verifiedCaller(event);
  logger.appendKeys({ tenant: caller.tenantId, subject: caller.subject });
  const body = bodyOf(event);
  // One request's upstream reads share a small concurrency bound (lib/mcp/limits.ts).
  const upstream = pLimit(UPSTREAM_CONCURRENCY);
  const response = await serveMcpRequest(webRequest(event, body), body, { ...caller, signal: deadline, upstream: (read) => upstream(read) });
  return lambdaResult(response);
}
