import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { TOOL_NAMES } from '../contract/mcp-tools.js';
import { idOf, JSON_RPC_ERRORS, type JsonRpcRefusal, named } from './json-rpc.js';
import { MAX_BATCH_MESSAGES, MAX_TOOL_CALLS_PER_REQUEST } from './limits.js';

/**
 * What the door refuses before the SDK sees a request, so one HTTP request has a bounded cost
 * (lib/mcp/limits.ts) and every refusal is one sentence naming what was wrong (the SDK's own would
 * be a zod issue dump, or a sentence about something else):
 * - an `MCP-Protocol-Version` header naming no version the door speaks;
 * - a message that is not JSON-RPC 2.0 (not an object, no `"jsonrpc": "2.0"`, no method and no
 *   result, an id that is not a string or number, params that are not an object);
 * - `initialize` without the params it needs, and in a batch at all (it opens a conversation:
 *   nothing can come with it);
 * - a JSON-RPC batch where the protocol has none: batches exist only in MCP 2025-03-26 (2025-06-18
 *   removed them; a request without `MCP-Protocol-Version` is taken as 2025-03-26, as the
 *   specification says); an empty one; one of more than MAX_BATCH_MESSAGES messages or
 *   MAX_TOOL_CALLS_PER_REQUEST tool calls and view reads together, refused whole, before any runs;
 * - `tools/call` of a tool the door does not have, or whose `arguments` is not an object;
 *   `resources/read` without a `uri`;
 * - `subscriptions/listen` as a request of its own: a subscription stream cannot be served by a
 *   buffered Lambda answer, and there is nothing to subscribe to (an unknown method, HTTP 200).
 */

/** The protocol revision of requests that carry it in `_meta` (served by the SDK's per-request entry). */
const ENVELOPE_PROTOCOL = '2026-07-28';
/** Every protocol version the door speaks, newest first. */
export const SPOKEN_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([ENVELOPE_PROTOCOL, ...SUPPORTED_PROTOCOL_VERSIONS]);
/** The protocol revisions that have JSON-RPC batches. */
const BATCHING_PROTOCOLS = new Set(['2025-03-26']);
const KNOWN_TOOLS: readonly string[] = Object.values(TOOL_NAMES);

interface Problem {
  code: number;
  sentence: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'string' ? 'a string' : `a ${typeof value}`;
}

/** `a, b and c` */
function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

const EXAMPLE_INITIALIZE = '{"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "…", "version": "…"}}';

/** What an initialize's params lack, or undefined when they have what the SDK needs. */
function initializeProblem(params: unknown): string | undefined {
  if (params === undefined) return 'it has none';
  if (!isObject(params)) return `they are ${kindOf(params)}`;
  const wrong: string[] = [];
  if (typeof params.protocolVersion !== 'string') wrong.push('protocolVersion (a string)');
  if (!isObject(params.capabilities)) wrong.push('capabilities (an object)');
  const info = params.clientInfo;
  if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string')
    wrong.push('clientInfo (an object with the strings name and version)');
  return wrong.length > 0 ? `${listed(wrong)} ${wrong.length === 1 ? 'is' : 'are'} missing or of another type` : undefined;
}

/** What is wrong with the params of a method the door knows, if anything. */
function paramsProblem(method: string, params: unknown): Problem | undefined {
  const invalid = (sentence: string): Problem => ({ code: JSON_RPC_ERRORS.invalidParams, sentence });
  if (method === 'initialize') {
    const problem = initializeProblem(params);
    return problem ? invalid(`initialize needs params such as ${EXAMPLE_INITIALIZE}, and ${problem}.`) : undefined;
  }
  if (method === 'tools/call') {
    const name = isObject(params) ? params.name : undefined;
    if (typeof name !== 'string') return invalid(`tools/call needs params.name, the tool to call: ${listed(KNOWN_TOOLS)}.`);
    if (!KNOWN_TOOLS.includes(name)) return invalid(`There is no tool ${named(name)} here; the tools are ${listed(KNOWN_TOOLS)}.`);
    const args = (params as { arguments?: unknown }).arguments;
    if (args !== undefined && !isObject(args)) {
      return invalid(
        `The arguments of tools/call must be a JSON object of named values, such as {"agent_id": "…", "reason": "…"}; got ${kindOf(args)}.`,
      );
    }
  }
  if (method === 'resources/read' && !(isObject(params) && typeof params.uri === 'string')) {
    return invalid('resources/read needs params.uri, the URI of a resource that resources/list names.');
  }
  return undefined;
}

/** What makes a parsed message something other than a JSON-RPC 2.0 message the door serves, if anything. */
function messageProblem(message: unknown): Problem | undefined {
  const invalid = (sentence: string): Problem => ({ code: JSON_RPC_ERRORS.invalidRequest, sentence });
  if (!isObject(message)) {
    return invalid(
      `A JSON-RPC message must be an object such as {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}; got ${kindOf(message)}.`,
    );
  }
  if (message.jsonrpc !== '2.0') return invalid('A JSON-RPC message must say "jsonrpc": "2.0".');
  if ('id' in message && typeof message.id !== 'string' && typeof message.id !== 'number') {
    return invalid(`The id of a JSON-RPC message must be a string or a number; got ${kindOf(message.id)}.`);
  }
  if (!('method' in message)) {
    const isResponse = 'id' in message && ('result' in message || 'error' in message);
    return isResponse
      ? undefined
      : invalid('A JSON-RPC message needs a "method" (a request or notification), or a "result" or "error" (a response).');
  }
  if (typeof message.method !== 'string' || message.method === '') {
    return invalid(`The method of a JSON-RPC message must be a non-empty string such as "tools/list"; got ${kindOf(message.method)}.`);
  }
  if ('params' in message && !isObject(message.params)) {
    return {
      code: JSON_RPC_ERRORS.invalidParams,
      sentence: `The params of ${named(message.method)} must be a JSON object; got ${kindOf(message.params)}.`,
    };
  }
  return 'id' in message ? paramsProblem(message.method, message.params) : undefined;
}

/** A sentence to follow a colon: "A JSON-RPC…" and "The id…" lose their capital, a quoted or code name keeps its case. */
const lowerFirst = (sentence: string): string =>
  /^(?:A |[A-Z][a-z])/.test(sentence) ? `${sentence.charAt(0).toLowerCase()}${sentence.slice(1)}` : sentence;

function batchRefusal(body: unknown[], version: string): JsonRpcRefusal | undefined {
  const refuse = (sentence: string): JsonRpcRefusal => ({ status: 400, id: null, code: JSON_RPC_ERRORS.invalidRequest, sentence });
  if (!BATCHING_PROTOCOLS.has(version)) {
    return refuse(`JSON-RPC batches are not part of MCP protocol ${named(version, 20)}; send one request per HTTP request.`);
  }
  if (body.length === 0) return refuse('A JSON-RPC batch must carry at least one message; this one is empty.');
  if (body.length > MAX_BATCH_MESSAGES) {
    return refuse(`A batch may carry at most ${MAX_BATCH_MESSAGES} messages; this one has ${body.length}. Nothing in it was run.`);
  }
  const methods = body.map((m) => (isObject(m) ? m.method : undefined));
  if (methods.includes('initialize')) {
    return refuse(
      'initialize cannot be batched: send it alone, in an HTTP request of its own, before anything else; nothing in the batch was run.',
    );
  }
  // A view read (resources/read, the MCP App's HTML) may be as large as a tool result: it counts as one.
  const reads = methods.filter((m) => m === 'resources/read').length;
  const heavy = reads + methods.filter((m) => m === 'tools/call').length;
  if (heavy > MAX_TOOL_CALLS_PER_REQUEST) {
    return refuse(
      `A batch may carry at most ${MAX_TOOL_CALLS_PER_REQUEST} tools/call${reads ? ' and resources/read' : ''}; this one has ${heavy}. Nothing in it was run: send the others in further requests.`,
    );
  }
  for (const [index, message] of body.entries()) {
    const problem = messageProblem(message);
    if (problem) {
      return {
        status: 400,
        id: null,
        code: problem.code,
        sentence: `Message ${index + 1} of the batch is refused: ${lowerFirst(problem.sentence.replace(/\.$/, ''))}; nothing in the batch was run.`,
      };
    }
  }
  return undefined;
}

/**
 * The answer refusing this request, or undefined when the SDK may serve it. `body` is the parsed
 * JSON body (lib/mcp/request-body.ts parsed it), `protocolVersion` the `MCP-Protocol-Version`
 * header. A single request's refusal echoes its id with HTTP 200, as the SDK answers a request it
 * cannot serve; a refusal of the whole HTTP request (the header, the message's shape, a batch) is
 * a 400 with `id: null`.
 */
export function requestRefusal(body: unknown, protocolVersion: string | null): JsonRpcRefusal | undefined {
  const header = protocolVersion?.trim();
  if (header !== undefined && header !== '' && !SPOKEN_PROTOCOL_VERSIONS.includes(header)) {
    return {
      status: 400,
      id: idOf(body),
      code: JSON_RPC_ERRORS.invalidRequest,
      sentence: `The MCP-Protocol-Version header ${named(header, 40)} names no protocol version this server speaks: it speaks ${listed(SPOKEN_PROTOCOL_VERSIONS)}.`,
    };
  }
  if (Array.isArray(body)) return batchRefusal(body, header || '2025-03-26');
  const problem = messageProblem(body);
  const id = idOf(body);
  if (!problem && id !== null && (body as { method?: unknown }).method === 'subscriptions/listen') {
    return {
      status: 200,
      id,
      code: JSON_RPC_ERRORS.methodNotFound,
      sentence: 'subscriptions/listen is not served: this server is stateless and its tools never change.',
    };
  }
  if (!problem) return undefined;
  return { status: problem.code === JSON_RPC_ERRORS.invalidParams && id !== null ? 200 : 400, id, ...problem };
}
