import { quoted } from './reported-text.js';

/**
 * The JSON-RPC errors a client of the MCP door sees, all written by jsonRpcAnswer, each one
 * sentence naming what was wrong: the door's own refusals (lib/mcp/request-rules.ts,
 * lib/mcp/request-body.ts), and the SDK's errors, rewritten where the SDK's text is not such a
 * sentence (a zod issue dump, a bare "Method not found", a "Bad Request:" prefix).
 */

export const JSON_RPC_ERRORS = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
});

export type JsonRpcId = string | number | null;

/** A refusal of the door's own, before the SDK sees the request: its HTTP status, the request's id (null when it has none or could not be read), the error code and its one sentence. */
export interface JsonRpcRefusal {
  status: number;
  id: JsonRpcId;
  code: number;
  sentence: string;
}

/** A JSON-RPC error answer: one error object. */
function jsonRpcError({ status, id, code, sentence }: JsonRpcRefusal): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: sentence } }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

/** The id of a parsed message, when it has one JSON-RPC allows (a string or a number). */
export function idOf(message: unknown): JsonRpcId {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** A client-chosen name in a sentence: a code span, escaped and cut (lib/mcp/reported-text.ts), so it can never form markup or run on. */
export function named(value: unknown, max = 60): string {
  return quoted(typeof value === 'string' ? value : String(value), max);
}

interface ErrorObject {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

/** The prefixes the SDK puts before its sentences, which say nothing the code does not. */
const SDK_PREFIXES = /^(?:Bad Request|Invalid Request|Invalid params|Parse error|Not Acceptable|Unsupported Media Type): /;

/** What the SDK's own message becomes, knowing the method of the request it answers (when known). */
function sentenceFor(error: ErrorObject, status: number, method: string | undefined): string {
  const message = typeof error.message === 'string' ? error.message : '';
  const about = method === undefined ? 'the request' : named(method);
  if (status === 406) return 'The Accept header must name both application/json and text/event-stream.';
  if (status === 415) return 'The Content-Type header must be application/json.';
  if (error.code === JSON_RPC_ERRORS.methodNotFound) return `This MCP server does not serve the method ${about}.`;
  const notFound = /^Resource not found: (.*)$/s.exec(message);
  if (notFound) return `There is no resource ${named(notFound[1])} here; resources/list names the ones there are.`;
  const envelope = (error.data as { envelope?: { key?: unknown; problem?: unknown; missing?: unknown } } | undefined)?.envelope;
  if (Array.isArray(envelope?.missing)) {
    return `A 2026-07-28 request (as its MCP-Protocol-Version header says) carries its protocol version, client information and capabilities in params._meta, and this one lacks ${envelope.missing.map((key) => named(key)).join(', ')}.`;
  }
  if (typeof envelope?.key === 'string' && typeof envelope.problem === 'string') {
    return `The _meta envelope of this 2026-07-28 request has ${named(envelope.key)} ${envelope.problem === 'missing' ? 'missing' : `(${envelope.problem})`}: a 2026-07-28 request carries its protocol version, client information and capabilities in params._meta.`;
  }
  const plain = message.replace(SDK_PREFIXES, '').trim();
  // An issue dump (zod's JSON, several lines) or nothing at all: a fixed sentence instead.
  if (plain === '' || plain.includes('\n') || /^[[{]/.test(plain)) {
    return error.code === JSON_RPC_ERRORS.invalidParams || error.code === JSON_RPC_ERRORS.internalError
      ? `The params of ${about} are not what the method takes.`
      : `The request could not be served as sent (${about}).`;
  }
  const sentence = `${plain.charAt(0).toUpperCase()}${plain.slice(1)}`;
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

function methodsById(body: unknown): Map<JsonRpcId, string> {
  const methods = new Map<JsonRpcId, string>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const method = (message as { method?: unknown } | null)?.method;
    if (typeof method === 'string') methods.set(idOf(message), method);
  }
  return methods;
}

/**
 * The door's JSON-RPC answer to a request whose parsed body is `body` (undefined when it could not
 * be read): a refusal of its own as one error object, or the SDK's answer with every JSON-RPC
 * error in it written as one sentence (sentenceFor), anything else unchanged. Only an answer whose
 * text holds an error object is parsed: a result's text cannot hold one outside a JSON string,
 * where its quotes are escaped.
 */
export async function jsonRpcAnswer(served: JsonRpcRefusal | Response, body: unknown): Promise<Response> {
  if (!(served instanceof Response)) return jsonRpcError(served);
  const response = served;
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('application/json')) return response;
  const text = await response.text();
  const rebuilt = (payload: string): Response =>
    new Response(payload, { status: response.status, statusText: response.statusText, headers: response.headers });
  if (!text.includes('"error":{')) return rebuilt(text);
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return rebuilt(text);
  }
  const methods = methodsById(body);
  const rewrite = (message: unknown): unknown => {
    const error = (message as { error?: ErrorObject } | null)?.error;
    if (!error || typeof error !== 'object') return message;
    return { ...(message as object), error: { ...error, message: sentenceFor(error, response.status, methods.get(idOf(message))) } };
  };
  return rebuilt(JSON.stringify(Array.isArray(answer) ? answer.map(rewrite) : rewrite(answer)));
}
