import { gzipSync } from 'node:zlib';
import { NotAcceptableError } from './errors.js';

export interface JsonResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

/**
 * Lambda returns at most 6 MB to API Gateway; keep headroom for headers and the payload envelope.
 * A larger uncompressed body cannot be delivered at all.
 */
export const MAX_UNCOMPRESSED_BYTES = 5_500_000;
/** Below this, compressing costs more than it saves. */
const COMPRESS_FROM_BYTES = 8_192;

/** The headers of every failure (DESIGN §6): text, never cached. */
export const FAILURE_HEADERS = Object.freeze({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });

/** The body of every failure: one sentence and the request id the client can quote. */
export function failureBody(sentence: string, requestId: string): string {
  return `${sentence} (request id: ${requestId})\n`;
}

/** A JSON success response; tenant data is never cached by intermediaries. */
export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): JsonResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/**
 * A JSON response gzip-compressed when the client accepts it and it is worth it. A large tenant's
 * inventory (some 20,000 endpoints) passes Lambda's 6 MB response limit as plain JSON and fits
 * many times over compressed; when the client does not accept gzip and the body cannot be
 * delivered plainly, the answer is a 406 saying what to send, never a truncated or empty list.
 */
export function negotiatedJsonResponse(
  statusCode: number,
  body: unknown,
  acceptEncoding: string | undefined,
  headers: Record<string, string> = {},
): JsonResult {
  const plain = jsonResponse(statusCode, body, { ...headers, Vary: 'Accept-Encoding' });
  const size = Buffer.byteLength(plain.body);
  if (acceptsGzip(acceptEncoding) && size >= COMPRESS_FROM_BYTES) {
    return {
      ...plain,
      headers: { ...plain.headers, 'Content-Encoding': 'gzip' },
      body: gzipSync(plain.body).toString('base64'),
      isBase64Encoded: true,
    };
  }
  if (size > MAX_UNCOMPRESSED_BYTES) {
    throw new NotAcceptableError(
      `The answer is ${(size / 1_000_000).toFixed(1)} MB, more than can be sent uncompressed; send Accept-Encoding: gzip.`,
    );
  }
  return plain;
}
