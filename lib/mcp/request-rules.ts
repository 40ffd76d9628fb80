import { MAX_BATCH_MESSAGES, MAX_TOOL_CALLS_PER_REQUEST } from './limits.js';

/**
 * What the door refuses before the SDK sees a request, so one HTTP request has a bounded cost
 * (lib/mcp/limits.ts) and every refusal is one sentence:
 * - a JSON-RPC batch where the protocol has none: batches exist only in MCP 2025-03-26 (2025-06-18
 *   removed them; a request without `MCP-Protocol-Version` is taken as 2025-03-26, as the
 *   specification says);
 * - a batch of more than MAX_BATCH_MESSAGES messages or MAX_TOOL_CALLS_PER_REQUEST tool calls and
 *   view reads together, refused whole, before any of them runs;
 * - `tools/call` whose `arguments` is not an object (the SDK would answer with its schema's issue dump).
 */

const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
/** The protocol revisions that have JSON-RPC batches. */
const BATCHING_PROTOCOLS = new Set(['2025-03-26']);

type JsonRpcId = string | number | null;

function jsonRpcError(status: number, id: JsonRpcId, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'a string' : `a ${typeof value}`;
}

/** The sentence for a tools/call whose arguments are not an object, or undefined when they are (or are absent). */
function argumentsProblem(message: unknown): string | undefined {
  if (!message || typeof message !== 'object' || (message as { method?: unknown }).method !== 'tools/call') return undefined;
  const params = (message as { params?: unknown }).params;
  if (!params || typeof params !== 'object' || !('arguments' in params)) return undefined;
  const args = (params as { arguments?: unknown }).arguments;
  if (args === undefined || (args !== null && typeof args === 'object' && !Array.isArray(args))) return undefined;
  return `The arguments of tools/call must be a JSON object of named values, such as {"agent_id": "…", "reason": "…"}; got ${kindOf(args)}.`;
}

function idOf(message: unknown): JsonRpcId {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * The answer refusing this request, or undefined when the SDK may serve it. `body` is the parsed
 * JSON body (undefined when it did not parse: the SDK answers that), `protocolVersion` the
 * `MCP-Protocol-Version` header.
 */
export function requestRefusal(body: unknown, protocolVersion: string | null): Response | undefined {
  if (!Array.isArray(body)) {
    const problem = argumentsProblem(body);
    return problem ? jsonRpcError(200, idOf(body), INVALID_PARAMS, problem) : undefined;
  }
  const version = protocolVersion?.trim() || '2025-03-26';
  if (!BATCHING_PROTOCOLS.has(version)) {
    return jsonRpcError(
      400,
      null,
      INVALID_REQUEST,
      `JSON-RPC batches are not part of MCP protocol ${JSON.stringify(version.slice(0, 20))}; send one request per HTTP request.`,
    );
  }
  if (body.length > MAX_BATCH_MESSAGES) {
    return jsonRpcError(
      400,
      null,
      INVALID_REQUEST,
      `A batch may carry at most ${MAX_BATCH_MESSAGES} messages; this one has ${body.length}. Nothing in it was run.`,
    );
  }
  // A view read (resources/read, the MCP App's HTML) may be as large as a tool result: it counts as one.
  const methods = body.map((m) => (m as { method?: unknown } | null)?.method);
  const reads = methods.filter((m) => m === 'resources/read').length;
  const heavy = reads + methods.filter((m) => m === 'tools/call').length;
  if (heavy > MAX_TOOL_CALLS_PER_REQUEST) {
    return jsonRpcError(
      400,
      null,
      INVALID_REQUEST,
      `A batch may carry at most ${MAX_TOOL_CALLS_PER_REQUEST} tools/call${reads ? ' and resources/read' : ''}; this one has ${heavy}. Nothing in it was run: send the others in further requests.`,
    );
  }
  for (const message of body) {
    const problem = argumentsProblem(message);
    if (problem) return jsonRpcError(400, null, INVALID_PARAMS, `${problem} Nothing in the batch was run.`);
  }
  return undefined;
}
