import type { ServerResponse } from 'node:http';
import type { Context } from 'aws-lambda';
import { FAILURE_HEADERS, failureBody } from '../../lib/http.js';
import type { RenderedGatewayResponse } from '../gateway-responses.js';
import type { LambdaHandler, TransferMode } from './routes.js';
import { type StreamingHandler, sendStreamingResult } from './streaming.js';

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

/** What a Lambda proxy integration returns (payload 1.0). */
export interface LambdaHttpResult {
  statusCode: number;
  headers?: Record<string, string | number | boolean>;
  multiValueHeaders?: Record<string, (string | number | boolean)[]>;
  body?: string;
  isBase64Encoded?: boolean;
}

/** The function's answer was not a proxy result: API Gateway answers INTEGRATION_FAILURE. */
export class MalformedIntegrationResultError extends Error {
  override name = 'MalformedIntegrationResultError';
}

function isLambdaHttpResult(value: unknown): value is LambdaHttpResult {
  const v = value as LambdaHttpResult | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    Number.isInteger(v.statusCode) &&
    (v.body === undefined || v.body === null || typeof v.body === 'string')
  );
}

/**
 * Writes a Lambda proxy result as the HTTP response API Gateway would send. A base64 body is
 * decoded (on AWS the only binary answer, the inventory's gzip, is streamed).
 */
function writeBufferedResult(res: ServerResponse, result: LambdaHttpResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  const body =
    result.body === undefined || result.body === null ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
  res.writeHead(result.statusCode, headers);
  res.end(body);
}

export interface Integration {
  transferMode: TransferMode;
  handler: LambdaHandler;
  event: unknown;
  context: Context;
}

/**
 * Invokes a route's Lambda proxy integration and writes its answer: the one place where a route's
 * transfer mode matters. BUFFERED: the function's whole proxy result at once. STREAM: its prelude
 * and body bytes as it writes them (infra/local/streaming.ts).
 * @throws whatever the function throws before it answered, and MalformedIntegrationResultError for
 * an answer that is not a proxy result, before anything is written (the gateway answers
 * INTEGRATION_FAILURE).
 */
export async function invokeIntegration(res: ServerResponse, integration: Integration): Promise<void> {
  if (integration.transferMode === 'STREAM') {
    await sendStreamingResult(res, integration.handler as unknown as StreamingHandler, integration.event, integration.context);
    return;
  }
  const result = await integration.handler(integration.event, integration.context);
  if (!isLambdaHttpResult(result)) throw new MalformedIntegrationResultError('the function did not answer with a proxy result');
  writeBufferedResult(res, result);
}

/** A gateway response (infra/gateway-responses.ts) as rendered for this request. */
export function sendGatewayResponse(res: ServerResponse, response: RenderedGatewayResponse): void {
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
  res.end(failureBody(sentence, requestId));
}
