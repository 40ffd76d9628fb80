import pLimit from 'p-limit';
import { callerFromAuthorizer } from '../auth/caller.js';
import { bearerToken } from '../auth/verify.js';
import type { McpConfig } from '../config.js';
import { httpError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { annotateTenant } from '../observability/tracer.js';
import type { JsonResult } from '../responses.js';
import { type RestRequest, singleHeader } from '../rest-request.js';
import { tenantReads } from '../store/tenant-client.js';
import { brokerHop } from './broker-hop.js';
import { brokerSecret } from './broker-secret.js';
import { assertAllowedOrigin } from './cors.js';
import { jsonRpcAnswer } from './json-rpc.js';
import { UPSTREAM_CONCURRENCY } from './limits.js';
import { readRequestBody } from './request-body.js';
import { requestRefusal } from './request-rules.js';
import { requestStates } from './request-state.js';
import { type McpServices, serveMcpRequest } from './server.js';

/**
 * The routes of the MCP function on the public REST API: `/api/mcp` behind the token authorizer
 * with the MCP audience. Its CORS preflight and the RFC 9728 documents are API Gateway's own static
 * answers (infra/static-answers.ts), which never reach a function. The handler reads the event
 * into a plain request (functions/rest-event.ts); the answer is a web-standard Response, made a
 * plain HTTP result once, at the end.
 */

const MCP_PATH = '/api/mcp';

/** The MCP door of one function: its configuration, and what its server works with (the store, the broker's hop and secret). */
export interface McpDoor extends McpServices {
  cfg: McpConfig;
}

/** The door, made once at the MCP function's init from its configuration: clients and caches are kept across invocations. */
export function mcpDoor(cfg: McpConfig): McpDoor {
  const secret = brokerSecret(cfg);
  return {
    cfg,
    ticketSystem: cfg.ticketSystem,
    inventory: { reads: tenantReads(cfg), cfg },
    hop: brokerHop(cfg, secret),
    states: requestStates(secret),
  };
}

/**
 * The deadline of one MCP request's upstream calls (token exchange, the private operation, the
 * store): the invocation's deadline or, when sooner, `UPSTREAM_TIMEOUT_MS`. One that passes is a
 * tool error ("did not answer in time"), never a gateway timeout.
 */
export function upstreamDeadline(cfg: Pick<McpConfig, 'upstreamTimeoutMs'>, invocation: AbortSignal): AbortSignal {
  return AbortSignal.any([invocation, AbortSignal.timeout(cfg.upstreamTimeoutMs)]);
}

/**
 * One request at the MCP door: `POST /api/mcp` for a verified caller (the tenant from the token's
 * claims, the token itself kept only to be exchanged, never passed on); 405 for the other methods
 * on the path (no SSE stream, no session to delete), 404 elsewhere. A 401 of its own carries the
 * Bearer challenge with `resource_metadata`.
 */
export async function serveMcpDoor(door: McpDoor, request: RestRequest, deadline: AbortSignal): Promise<JsonResult> {
  const origin = singleHeader(request, 'origin', 'Origin');
  if (request.resource !== MCP_PATH) throw httpError(404, 'No such route.');
  if (request.method !== 'POST') {
    throw httpError(405, 'This MCP server is stateless: it answers POST only (no event stream, no session to delete).', {
      headers: { Allow: 'POST' },
    });
  }
  assertAllowedOrigin(origin, door.cfg);
  // The authorizer verified the token and refused a repeated header; the door keeps the token only to exchange it.
  const caller = callerFromAuthorizer(request, 'mcp', door.cfg);
  const token = bearerToken(request.headers.get('authorization')?.[0]);
  logger.appendKeys({ tenant: caller.tenantId, subject: caller.subject });
  annotateTenant(caller.tenantId);
  const body = readRequestBody(request);
  const refusal = body.refusal ?? requestRefusal(body.parsed, request.headers.get('mcp-protocol-version')?.join(', ') ?? null);
  // One request's upstream reads share a small concurrency bound (lib/mcp/limits.ts).
  const upstream = pLimit(UPSTREAM_CONCURRENCY);
  const served =
    refusal ??
    (await serveMcpRequest(door, request, body, {
      ...caller,
      token,
      tokenExpiresAt: caller.expiresAt * 1000,
      signal: deadline,
      upstream: (read) => upstream(read),
    }));
  return httpResult(await jsonRpcAnswer(served, body.parsed));
}

/** A door's answer as the plain result the handler returns to API Gateway (payload 1.0); never cached unless it says otherwise. */
async function httpResult(response: Response): Promise<JsonResult> {
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if ((headers['content-type'] ?? '').startsWith('text/event-stream')) {
    // A buffered answer cannot carry a stream; the server never opens one (lib/mcp/server.ts).
    await response.body?.cancel();
    throw new Error('the MCP server answered with a stream');
  }
  return { statusCode: response.status, headers, body: await response.text() };
}
