import type { IncomingMessage, ServerResponse } from 'node:http';
import { FAILURE_HEADERS, failureText } from './failure.js';

/** Every value of a request header (`name` in lower case), in the order sent: Node keeps only the first `Host` in `req.headers`. */
export function headerValues(req: IncomingMessage, name: string): string[] {
  const values: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) values.push(raw[i + 1] ?? '');
  return values;
}

/** A body longer than the reader's bound: each listener answers it in its own words (413, invalid_request…). */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`the body is larger than ${maxBytes} bytes`);
  }
}

/**
 * A request's (or a fetched response's) whole body, read no further than `maxBytes`: the one
 * bounded reader of the local listeners.
 * @throws BodyTooLargeError as soon as the bound is passed
 */
export async function readBoundedBody(source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of source) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyTooLargeError(maxBytes);
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }
  return Buffer.concat(chunks);
}

/** An answer API Gateway makes itself (a gateway response, a MOCK integration's, a payload refusal): status, headers, body. */
export interface GatewayAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** An answer of API Gateway's own (local/public-api-answers.ts), as rendered for this request. */
export function sendGatewayResponse(res: ServerResponse, response: GatewayAnswer): void {
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

/**
 * A failure of the local stack itself that API Gateway has no type for (a request target that is
 * no path, the tables still being created): text/plain like every failure of the service.
 */
export function sendLocalFailure(
  res: ServerResponse,
  status: number,
  sentence: string,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...FAILURE_HEADERS, ...headers });
  res.end(failureText(sentence, requestId));
}
