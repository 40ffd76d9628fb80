export interface JsonResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

/**
 * The most a buffered Lambda function may return, as Lambda measures it: the whole serialized
 * response (status, headers, body, and the base64 of a binary body, inside the JSON envelope),
 * 6 MiB. The MCP door's answers are buffered and bounded below it (lib/mcp/limits.ts); the
 * inventory streams, and has Lambda's streamed limit instead (lib/json-array-stream.ts).
 */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6_291_456;

/** The headers of every failure (DESIGN §6): text, never cached. */
export const FAILURE_HEADERS = Object.freeze({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });

/** The body of every failure: one sentence and the request id the client can quote. */
export function failureBody(sentence: string, requestId: string): string {
  return `${sentence} (request id: ${requestId})\n`;
}

const FAILURE_BODY = /^(.+?) \(request id: ([^)\s]+)\)\s*$/s;

/** The sentence and request id of a body `failureBody` wrote, or undefined for any other text. */
export function parseFailureBody(body: string): { sentence: string; requestId: string } | undefined {
  const [, sentence, requestId] = FAILURE_BODY.exec(body) ?? [];
  return sentence !== undefined && requestId !== undefined ? { sentence, requestId } : undefined;
}

/** The headers of every JSON success: tenant data is never cached by intermediaries. */
export const JSON_HEADERS = Object.freeze({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });

/** A JSON success response; tenant data is never cached by intermediaries. */
export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): JsonResult {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}
