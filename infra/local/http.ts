import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequestError, HttpError } from '../../lib/errors.js';
import { failureBody, FAILURE_HEADERS } from '../../lib/http.js';

/** What a Lambda proxy integration returns (payload 1.0 and 2.0 structured results). */
export interface LambdaHttpResult {
  statusCode: number;
  headers?: Record<string, string | number | boolean>;
  multiValueHeaders?: Record<string, (string | number | boolean)[]>;
  body?: string;
  isBase64Encoded?: boolean;
}

/** Writes a Lambda proxy result as the HTTP response API Gateway would send. */
export function sendLambdaResult(res: ServerResponse, result: LambdaHttpResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  const body = result.body === undefined ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
  res.writeHead(result.statusCode, headers);
  res.end(body);
}

/** A gateway-level failure (no route, authorizer refusal): text/plain like every failure of the service. */
export function sendGatewayFailure(res: ServerResponse, status: number, sentence: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...FAILURE_HEADERS, ...headers });
  res.end(failureBody(sentence, randomUUID()));
}

export function sendHttpError(res: ServerResponse, error: unknown): void {
  if (error instanceof HttpError) sendGatewayFailure(res, error.statusCode, error.message, error.headers);
  else sendGatewayFailure(res, 500, 'The gateway failed to handle the request.');
}

/**
 * The request target as API Gateway reads it: an absolute path (which may begin with `//`) with
 * its query, or an absolute URL. Anything that is neither (`//[`, `http://[::1/…`, `*`) is a 400,
 * never a crash.
 */
export function targetOf(req: IncomingMessage): URL {
  const target = req.url ?? '/';
  try {
    return target.startsWith('/') ? new URL(`http://local${target}`) : new URL(target);
  } catch {
    throw new BadRequestError('The request target is not a valid path.');
  }
}

export function pathOf(req: IncomingMessage): string {
  return targetOf(req).pathname;
}
