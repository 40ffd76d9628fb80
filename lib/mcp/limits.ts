import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../responses.js';

/**
 * The bounded cost of one HTTP request at the MCP door (docs/operations.md, "The MCP door's cost
 * per request"). Every bound is known before the first upstream read, so no read is made, and
 * audited as allowed, for an answer that could not be sent.
 */

/**
 * The most `tools/call` one HTTP request may carry. Only the 2025-03-26 protocol has JSON-RPC
 * batches; a batch with more tool calls is refused whole, before any of them runs.
 */
export const MAX_TOOL_CALLS_PER_REQUEST = 4;

/** The most messages one batch may carry (tool calls and cheap ones such as tools/list together). */
export const MAX_BATCH_MESSAGES = 8;

/**
 * The largest request body the door reads, in bytes, refused (413) before anything parses it. The
 * largest legal request, a 2025-03-26 batch of MAX_BATCH_MESSAGES messages with every argument at
 * its bound in the characters that escape to the most bytes, measures 20,061 bytes
 * (test/unit/mcp-request-body.test.ts builds it); 128 KiB leaves room for what clients add in
 * `_meta` (a 2026-07-28 request repeats its client information there, icons as data URIs
 * included), and is a thirty-second of the SDK's own 4 MiB.
 */
export const MAX_REQUEST_BODY_BYTES = 131_072;

/**
 * The deepest nesting of arrays and objects a request body may have, checked by a scan that keeps
 * no stack before JSON.parse runs. The deepest legal message (a client capability under `_meta` of
 * a 2026-07-28 tool call) is 7 deep; more than this is a JSON-RPC parse error (400).
 */
export const MAX_JSON_DEPTH = 32;

/** Upstream reads (the observations hop with its token exchange, the inventory's Query) one request runs at a time. */
export const UPSTREAM_CONCURRENCY = 2;

/**
 * The longest endpoint-reported value (hostname, OS, client name…) a tool result carries exactly,
 * in characters (code points). No real hostname (253), OS or client name comes near it; a longer
 * value is cut there in `structuredContent` too, ending in `…[cut: N characters in all]`, so that
 * one result's size has a bound that does not depend on what an endpoint chose to report.
 */
export const MAX_REPORTED_CHARACTERS = 16_384;

/** What the JSON-RPC envelope, the headers and the Lambda result around the tool results may take. */
const ENVELOPE_BYTES = 65_536;

/**
 * The most one tool result may add to the Lambda answer, as Lambda measures it (lib/responses.ts
 * lambdaResponseBytes: the body is JSON inside JSON, so quotes and backslashes count twice). With
 * at most MAX_TOOL_CALLS_PER_REQUEST results the whole answer fits LAMBDA_RESPONSE_LIMIT_BYTES.
 * An observations result stays below it by construction (the bounds above; a test builds the
 * largest one); list_endpoints stops adding endpoints before it would pass it.
 */
export const RESULT_BUDGET_BYTES = Math.floor((LAMBDA_RESPONSE_LIMIT_BYTES - ENVELOPE_BYTES) / MAX_TOOL_CALLS_PER_REQUEST);

/** Bytes a piece of JSON-RPC text adds to the Lambda answer: JSON inside the body, the body inside Lambda's JSON. */
export function answerBytes(jsonValue: unknown): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(jsonValue)));
}
