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
import type { RestRequest } from '../rest-request.js';
import type { RequestBody } from './request-body.js';
import type { RequestStates } from './request-state.js';
import { registerTools, type ToolCaller, type ToolServices } from './tools.js';
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
  'observations needs a reason (it is audited) and, for some tenants, a ticket: never invent them; a client that can show forms lets the server ask the user.',
  'Missing data is unknown, never healthy; a null value is not zero; an error result means the read failed, not that all is well.',
].join(' ');

/** What the server works with, made once at the MCP function's init: the tools' services, and the forms' signed state. */
export interface McpServices extends ToolServices {
  states: RequestStates;
}

function buildServer(caller: ToolCaller, services: McpServices): McpServer {
  // No list changes are ever announced: the tools and views are fixed, and the server keeps no state to announce from.
  // A retry's requestState is checked before any tool runs: one we did not mint for this caller, or an expired one, is refused (-32602).
  const server = new McpServer(SERVER_INFO, {
    instructions: INSTRUCTIONS,
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
    requestState: { verify: (state, ctx) => services.states.verify(state, ctx) },
  });
  registerTools(server, caller, services);
  registerViews(server);
  return server;
}

function callerOf(authInfo: AuthInfo | undefined): ToolCaller {
  const caller = authInfo?.extra?.caller as ToolCaller | undefined;
  if (!caller) throw new Error('the MCP door passed no caller');
  return caller;
}

/** One per services (one per process: the function's). */
const modern = new WeakMap<McpServices, McpHttpHandler>();

/**
 * The SDK's per-request entry, made once per process. Its answers are JSON: `auto`, the SDK's
 * default, answers with JSON unless a tool sends a notification before its result, which ours
 * never do (the door refuses to pass on a stream in any case). `json` would drop such
 * notifications instead, but the SDK prints a console notice about that for every handler it
 * makes, which no option turns off.
 */
function modernHandler(services: McpServices): McpHttpHandler {
  let handler = modern.get(services);
  if (!handler) {
    handler = createMcpHandler((ctx: McpRequestContext) => buildServer(callerOf(ctx.authInfo), services), { legacy: 'reject' });
    modern.set(services, handler);
  }
  return handler;
}

/** Headers that describe the original connection, not the message; the Request recomputes what it needs. */
const HOP_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** The web-standard Request the SDK takes, made from the door's request and its body's text. */
function sdkRequest(request: RestRequest, body: string): Request {
  const headers = new Headers();
  for (const [name, values] of request.headers) {
    if (HOP_HEADERS.has(name)) continue;
    for (const value of values) headers.append(name, value);
  }
  const query = new URLSearchParams();
  for (const [name, values] of request.query) for (const value of values) query.append(name, value);
  const search = query.toString();
  return new Request(`https://${request.host}${request.path}${search ? `?${search}` : ''}`, { method: 'POST', headers, body });
}

/**
 * The SDK's answer to one MCP POST for a verified caller, its body read within
 * MAX_REQUEST_BODY_BYTES and MAX_JSON_DEPTH (lib/mcp/request-body.ts) and not refused by
 * lib/mcp/request-rules.ts.
 */
export async function serveMcpRequest(
  services: McpServices,
  request: RestRequest,
  body: RequestBody,
  caller: ToolCaller,
): Promise<Response> {
  const sdk = sdkRequest(request, body.text);
  const authInfo: AuthInfo = { token: caller.token, clientId: caller.subject, scopes: [], extra: { caller } };
  const options = { authInfo, parsedBody: body.parsed };
  if (await isLegacyRequest(sdk, body.parsed)) {
    const server = buildServer(caller, services);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(sdk, options);
    } finally {
      await server.close();
    }
  }
  return modernHandler(services).fetch(sdk, options);
}
