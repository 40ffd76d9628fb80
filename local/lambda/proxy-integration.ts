import type { ServerResponse } from 'node:http';
import { BodyTooLargeError, readBoundedBody } from '../listener-io.js';
import { PRELUDE_CONTENT_TYPE, PRELUDE_DELIMITER_BYTES } from './awslambda.js';
import { MAX_BUFFERED_RESPONSE_BYTES } from './runtime-api.js';
import type { InvocationOutcome } from './sandbox.js';

/** BUFFERED: the function returns its whole answer; STREAM: it writes it as it goes (`transferMode: STREAM`). */
export type TransferMode = 'BUFFERED' | 'STREAM';

/**
 * The gateway's side of a function's answer: what API Gateway's Lambda proxy integration makes of
 * it, buffered (a payload 1.0 proxy result) or streamed (the runtime's HTTP prelude, then the body
 * as it comes, with backpressure).
 */

/** What a Lambda proxy integration returns (payload 1.0). */
export interface LambdaHttpResult {
  statusCode: number;
  headers?: Record<string, string | number | boolean>;
  multiValueHeaders?: Record<string, (string | number | boolean)[]>;
  body?: string;
  isBase64Encoded?: boolean;
}

/**
 * The function's answer cannot become an HTTP response (it failed, it is no proxy result, its
 * stream has no prelude): API Gateway answers INTEGRATION_FAILURE. Thrown only before anything was
 * written to the client.
 */
export class IntegrationFailure extends Error {
  override name = 'IntegrationFailure';
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

/** A buffered payload read as a proxy result. @throws IntegrationFailure when it is none */
function proxyResult(payload: Buffer): LambdaHttpResult {
  let result: unknown;
  try {
    result = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new IntegrationFailure('the function answered something that is not JSON');
  }
  if (!isLambdaHttpResult(result)) throw new IntegrationFailure('the function did not answer with a proxy result');
  return result;
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

/** The prelude's end: 8 NUL bytes after its JSON (`awslambda.HttpResponseStream.from`). */
const PRELUDE_DELIMITER = Buffer.alloc(PRELUDE_DELIMITER_BYTES);
/** A prelude that does not end within this many bytes is not one (API Gateway fails the call). */
const MAX_PRELUDE_BYTES = 64 * 1024;

type StreamedAnswer = Extract<InvocationOutcome, { type: 'stream' }>;

function parsePrelude(json: Buffer): { statusCode: number; headers: Record<string, string> } {
  const value = JSON.parse(json.toString('utf8')) as { statusCode?: unknown; headers?: Record<string, unknown> };
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(value.headers ?? {})) headers[name] = String(v);
  return { statusCode: typeof value.statusCode === 'number' ? value.statusCode : 200, headers };
}

/**
 * API Gateway's streaming integration for one streamed answer: the prelude's status and headers,
 * then every body byte as the function writes it (chunked), each write waiting for the client's
 * socket: while the client's socket is full the runtime's POST is paused, so TCP's flow control
 * reaches the function's writes. A failure after the prelude (error trailers, an instance that
 * died) cuts the connection without ending the chunked body, so no client can take what it got
 * for a whole answer. A client that goes away cuts the runtime's POST, so the function's writes
 * fail, as on Lambda.
 * @throws IntegrationFailure when the function failed before anything was written
 */
async function relayStream(res: ServerResponse, answer: StreamedAnswer): Promise<void> {
  const { body } = answer;
  const withPrelude = answer.contentType === PRELUDE_CONTENT_TYPE;
  let pending: Buffer | undefined = Buffer.alloc(0);
  let broken: string | undefined;
  const write = (chunk: Buffer): void => {
    if (res.destroyed || chunk.length === 0) return;
    if (!res.write(chunk)) {
      body.pause();
      res.once('drain', () => body.resume());
    }
  };
  const begin = (statusCode: number, headers: Record<string, string>, rest: Buffer): void => {
    pending = undefined;
    res.writeHead(statusCode, headers);
    res.flushHeaders();
    write(rest);
  };
  res.once('close', () => {
    if (!res.writableFinished) answer.abort();
  });
  body.on('data', (chunk: Buffer) => {
    if (broken) return;
    if (pending === undefined) return write(chunk);
    pending = Buffer.concat([pending, chunk]);
    if (!withPrelude) return begin(200, {}, pending);
    const end = pending.indexOf(PRELUDE_DELIMITER);
    if (end < 0) {
      if (pending.length > MAX_PRELUDE_BYTES) {
        broken = 'the prelude has no end';
        answer.abort();
      }
      return;
    }
    let prelude: ReturnType<typeof parsePrelude>;
    try {
      prelude = parsePrelude(pending.subarray(0, end));
    } catch {
      broken = 'the prelude is not JSON';
      answer.abort();
      return;
    }
    begin(prelude.statusCode, prelude.headers, pending.subarray(end + PRELUDE_DELIMITER.length));
  });
  const failed = await answer.ended;
  if (failed || broken) {
    if (!res.headersSent) throw new IntegrationFailure(broken ?? `${failed?.errorType}: ${failed?.errorMessage}`);
    res.destroy();
    return;
  }
  // Ended without a (complete) prelude: API Gateway fails a call whose prelude never came; a stream
  // without one is passed on as a 200 body.
  if (pending !== undefined) {
    if (withPrelude) throw new IntegrationFailure('the stream ended before its prelude did');
    begin(200, {}, pending);
  }
  res.end();
}

/**
 * Writes a function's answer as API Gateway's Lambda proxy integration does: the one place where a
 * route's transfer mode matters. BUFFERED: the function's proxy result (a streaming function's
 * bytes, read whole, are no proxy result: INTEGRATION_FAILURE, as on AWS). STREAM: relayStream; a
 * buffered function's result is written whole.
 * @throws IntegrationFailure before anything is written, for an answer API Gateway cannot send
 */
export async function sendFunctionAnswer(
  res: ServerResponse,
  transferMode: TransferMode,
  answer: Extract<InvocationOutcome, { type: 'buffered' | 'stream' }>,
): Promise<void> {
  if (answer.type === 'buffered') return writeBufferedResult(res, proxyResult(answer.payload));
  if (transferMode === 'STREAM') return relayStream(res, answer);
  let payload: Buffer;
  try {
    payload = await readBoundedBody(answer.body, MAX_BUFFERED_RESPONSE_BYTES);
  } catch (error) {
    answer.abort();
    if (error instanceof BodyTooLargeError) throw new IntegrationFailure('the answer is larger than a buffered payload may be');
    throw error;
  }
  const failed = await answer.ended;
  if (failed) throw new IntegrationFailure(`${failed.errorType}: ${failed.errorMessage}`);
  writeBufferedResult(res, proxyResult(payload));
}
