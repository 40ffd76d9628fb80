import { logger } from '../observability/logger.js';
import type { RestRequest } from '../rest-request.js';
import { JSON_RPC_ERRORS, type JsonRpcRefusal } from './json-rpc.js';
import { MAX_JSON_DEPTH, MAX_REQUEST_BODY_BYTES } from './limits.js';

/**
 * The MCP door's request body, bounded before anything parses it, in the function (so on AWS as
 * locally): a body past MAX_REQUEST_BODY_BYTES is a 413 measured on the event's own string (not
 * decoded, not copied), and one nesting arrays and objects past MAX_JSON_DEPTH is a JSON-RPC parse
 * error (400) found by a scan that keeps no stack. Only then does JSON.parse run, on at most
 * MAX_REQUEST_BODY_BYTES of at most MAX_JSON_DEPTH levels: no body can cost an instance more than
 * that, whatever it holds.
 */

const KIB = 1024;

/** Bytes of a body as the Lambda event carries it: UTF-8 text, or base64 (its decoded size, computed without decoding). */
export function eventBodyBytes(body: string | null | undefined, isBase64Encoded: boolean): number {
  if (!body) return 0;
  if (!isBase64Encoded) return Buffer.byteLength(body, 'utf8');
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return Math.floor((body.length * 3) / 4) - padding;
}

/** The 413 for a body of `bytes`, or undefined when it is within MAX_REQUEST_BODY_BYTES. */
export function oversizeRefusal(bytes: number): JsonRpcRefusal | undefined {
  if (bytes <= MAX_REQUEST_BODY_BYTES) return undefined;
  return {
    status: 413,
    id: null,
    code: JSON_RPC_ERRORS.invalidRequest,
    sentence: `The request body has ${bytes.toLocaleString('en-US')} bytes, and this MCP server reads at most ${MAX_REQUEST_BODY_BYTES.toLocaleString('en-US')} (${MAX_REQUEST_BODY_BYTES / KIB} KiB): none of it was read.`,
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]); // [ {
const CLOSE = new Set([0x5d, 0x7d]); // ] }

/**
 * Whether JSON text nests arrays and objects deeper than `max`, found in one pass with a counter
 * (no recursion, no stack): brackets inside strings do not count. Text that is not JSON gives some
 * answer; JSON.parse refuses it afterwards in any case.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (OPEN.has(c)) {
      depth++;
      if (depth > max) return true;
    } else if (CLOSE.has(c)) depth--;
  }
  return false;
}

/**
 * The parsed body, or the answer refusing it: too deep (checked first, without parsing), empty,
 * or not JSON, each a JSON-RPC parse error (-32700, HTTP 400) in one sentence. The body must
 * already be within MAX_REQUEST_BODY_BYTES (oversizeRefusal).
 */
export function parseRequestBody(text: string): { parsed: unknown } | { refusal: JsonRpcRefusal } {
  const refuse = (sentence: string) => ({ refusal: { status: 400, id: null, code: JSON_RPC_ERRORS.parseError, sentence } });
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    return refuse(
      `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} deep, which no MCP message needs: it was not parsed.`,
    );
  }
  if (text.trim() === '') return refuse('The request body is empty: send one JSON-RPC message as JSON.');
  try {
    return { parsed: JSON.parse(text) };
  } catch {
    // JSON.parse's own message quotes the body: it is not repeated.
    return refuse('The request body is not valid JSON: send one JSON-RPC message (or, in protocol 2025-03-26, a batch of them) as JSON.');
  }
}

/** The door's request body: its text and the JSON it holds, or (both left empty) the refusal of it. */
export interface RequestBody {
  text: string;
  parsed: unknown;
  refusal?: JsonRpcRefusal;
}

/**
 * The door's request body, read as this file says: its size measured on the event's own string
 * (a 413 past MAX_REQUEST_BODY_BYTES, before it is decoded or copied), then decoded and parsed
 * once its nesting is known to be bounded.
 */
export function readRequestBody(request: Pick<RestRequest, 'body' | 'isBase64Encoded'>): RequestBody {
  const bytes = eventBodyBytes(request.body, request.isBase64Encoded);
  const tooLarge = oversizeRefusal(bytes);
  if (tooLarge) {
    logger.info('request body refused: too large', { bytes });
    return { text: '', parsed: undefined, refusal: tooLarge };
  }
  const text = request.isBase64Encoded ? Buffer.from(request.body, 'base64').toString('utf8') : request.body;
  const read = parseRequestBody(text);
  return 'refusal' in read ? { text: '', parsed: undefined, refusal: read.refusal } : { text, parsed: read.parsed };
}
