import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  type McpRequestContext,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { CONTRACT_VERSION } from '../contract/openapi.js';
import { logger } from '../observability/logger.js';
import { inOneSentence, JSON_RPC_ERRORS, jsonRpcError } from './json-rpc.js';
import { parseRequestBody } from './request-body.js';
import { requestRefusal } from './request-rules.js';
import { registerTools, type ToolCaller } from './tools.js';
import { registerViews } from './views.js';

/**
 * The MCP server behind `POST /api/mcp`: stateless Streamable HTTP with JSON answers, in both
 * protocol eras. A 2026-07-28 request (it carries its protocol version in `_meta`) goes to the
 * SDK's per-request entry; a 2025-era request (an `initialize` handshake, then plain requests)
 * to a stateless transport made for it alone, with JSON responses (the SDK's own legacy fallback
 * would answer with SSE). Either way a fresh server is built for the one request, for the caller
 * the door verified, and no session id is ever issued.
 */

const SERVER_INFO = Object.freeze({ name: 'endpoint-read-service', title: 'Endpoint read service', version: CONTRACT_VERSION });

const INSTRUCTIONS = [
  'Read-only tools over the managed endpoints of your tenant that your account may see.',
  'Use list_endpoints to find an endpoint and its agent_id, then observations to read its health dashboard.',
  'observations needs a reason (it is audited) and, for some tenants, a ticket.',
  'Missing data is unknown, never healthy; a null value is not zero; an error result means the read failed, not that all is well.',
].join(' ');

function buildServer(caller: ToolCaller): McpServer {
  // No list changes are ever announced: the tools and views are fixed, and the server keeps no state to announce from.
  const server = new McpServer(SERVER_INFO, {
    instructions: INSTRUCTIONS,
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
  });
  registerTools(server, caller);
  registerViews(server);
  return server;
}

function callerOf(authInfo: AuthInfo | undefined): ToolCaller {
  const caller = authInfo?.extra?.caller as ToolCaller | undefined;
  if (!caller) throw new Error('the MCP door passed no caller');
  return caller;
}

let modern: McpHttpHandler | undefined;

function modernHandler(): McpHttpHandler {
  modern ??= withoutJsonModeNotice(() =>
    createMcpHandler((ctx: McpRequestContext) => buildServer(callerOf(ctx.authInfo)), { legacy: 'reject', responseMode: 'json' }),
  );
  return modern;
}

/** The notice the SDK prints on the console each time it makes a handler in JSON response mode. */
const JSON_MODE_NOTICE = "responseMode: 'json' drops mid-call notifications";

/**
 * Runs `make` with that one console notice sent to the logger at DEBUG instead: our tools send no
 * mid-call notifications, so it is news to nobody, yet it would be a plain-text line in the
 * function's log on each cold start (and in a local stack's terminal on the first MCP call). Any
 * other console output passes through; the SDK has no option to turn the notice off.
 */
function withoutJsonModeNotice<T>(make: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith(JSON_MODE_NOTICE)) logger.debug('MCP SDK notice', { notice: args[0] });
    else warn.apply(console, args);
  };
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}

/** The JSON-RPC request in a body, when it is one (not a batch, not a notification). */
function singleRequest(body: unknown): { id: string | number; method: string } | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { id, method } = body as { id?: unknown; method?: unknown };
  return (typeof id === 'string' || typeof id === 'number') && typeof method === 'string' ? { id, method } : undefined;
}

/**
 * Answers one MCP POST for a verified caller. `body` is the raw request body, already within
 * MAX_REQUEST_BODY_BYTES (lib/mcp/request-body.ts): it is parsed here only once its nesting depth
 * is known to be bounded. What lib/mcp/request-rules.ts refuses never reaches the SDK, and what
 * the SDK answers with an error is written as one sentence (lib/mcp/json-rpc.ts). A subscription
 * stream (`subscriptions/listen`) cannot be served by a buffered Lambda answer and there is
 * nothing to subscribe to, so it is refused as an unknown method.
 */
export async function serveMcpRequest(request: Request, body: string, caller: ToolCaller): Promise<Response> {
  const read = parseRequestBody(body);
  if ('refusal' in read) return read.refusal;
  const parsedBody = read.parsed;
  const refusal = requestRefusal(parsedBody, request.headers.get('mcp-protocol-version'));
  if (refusal) return refusal;
  const single = singleRequest(parsedBody);
  if (single?.method === 'subscriptions/listen') {
    return jsonRpcError(
      200,
      single.id,
      JSON_RPC_ERRORS.methodNotFound,
      'subscriptions/listen is not served: this server is stateless and its tools never change.',
    );
  }
  const authInfo: AuthInfo = { token: caller.token, clientId: caller.subject, scopes: [], extra: { caller } };
  const options = { authInfo, parsedBody };
  if (await isLegacyRequest(request, parsedBody)) {
    const server = buildServer(caller);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await inOneSentence(await transport.handleRequest(request, options), parsedBody);
    } finally {
      await server.close();
    }
  }
  return inOneSentence(await modernHandler().fetch(request, options), parsedBody);
}
