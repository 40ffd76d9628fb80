import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { lambdaContext } from './lambda-context.js';

/**
 * Lambda response streaming without AWS: a stand-in for what the Node.js runtime gives a streaming
 * function (the `awslambda` global: `streamifyResponse` and `HttpResponseStream.from`, which
 * writes the HTTP prelude, JSON then 8 NUL bytes, before the first body byte), and the part of
 * API Gateway (`responseTransferMode: STREAM`) that reads that stream and writes it to the client
 * as it comes. The same stand-in middy and Powertools use in their own tests; no official emulator
 * streams progressively (the runtime interface emulator and SAM CLI buffer).
 *
 * Importing this module installs the stand-in (when no runtime provided one): import it before a
 * streaming handler module, whose `middy({ streamifyResponse: true })` calls
 * `awslambda.streamifyResponse` when it is loaded.
 */

/** What a streaming handler is called with: the event, the response stream, the context. */
export type StreamingHandler = (event: unknown, responseStream: Writable, context: Context) => Promise<unknown>;

/** The runtime's prelude delimiter: 8 NUL bytes after the JSON prelude. */
const PRELUDE_DELIMITER = Buffer.alloc(8);
const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
/** A prelude that does not end within this many bytes is not one (API Gateway fails the call). */
const MAX_PRELUDE_BYTES = 64 * 1024;

/** What the stand-in marks a streamified handler with (the runtime knows it the same way, by a symbol). */
const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');

/**
 * The response stream the runtime hands a streaming handler, as far as handlers see it: a Writable
 * with `setContentType`, and the hook `HttpResponseStream.from` uses to put the prelude before the
 * first write. Every byte goes to `sink` in order; the Writable's own buffering gives backpressure.
 */
export class ResponseStreamStandIn extends Writable {
  contentType: string | undefined;
  /** Set by HttpResponseStream.from: writes the prelude before the first body byte. */
  onBeforeFirstWrite: ((write: (chunk: Buffer) => void) => void) | undefined;
  private started = false;

  constructor(private readonly sink: (chunk: Buffer, done: (error?: Error | null) => void) => void) {
    super({ highWaterMark: 64 * 1024 });
  }

  setContentType(type: string): void {
    this.contentType = type;
  }

  private preludeChunks(): Buffer[] {
    if (this.started) return [];
    this.started = true;
    const chunks: Buffer[] = [];
    this.onBeforeFirstWrite?.((chunk) => chunks.push(Buffer.from(chunk)));
    return chunks;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.sink(Buffer.concat([...this.preludeChunks(), chunk]), done);
  }

  override _final(done: (error?: Error | null) => void): void {
    // A handler that wrote no body still sends its prelude (an empty 200, a failure without text).
    const prelude = this.preludeChunks();
    if (prelude.length === 0) done();
    else this.sink(Buffer.concat(prelude), done);
  }
}

/**
 * Installs the stand-in's two members on the `awslambda` global, unless a real runtime (or an
 * earlier call) put them there. The global itself may exist already: the SDK's invoke store
 * creates an empty one when it loads.
 */
export function installLambdaStreamingStandIn(): void {
  const global = globalThis as { awslambda?: Record<string, unknown> };
  global.awslambda ??= {};
  const lambda = global.awslambda;
  lambda.streamifyResponse ??= <H extends object>(handler: H): H => Object.assign(handler, { [STREAMING]: true });
  lambda.HttpResponseStream ??= {
    from(stream: ResponseStreamStandIn, prelude: { statusCode?: number; headers?: Record<string, unknown> }): ResponseStreamStandIn {
      stream.setContentType(PRELUDE_CONTENT_TYPE);
      stream.onBeforeFirstWrite = (write) => {
        write(Buffer.from(JSON.stringify(prelude)));
        write(PRELUDE_DELIMITER);
      };
      return stream;
    },
  };
}

installLambdaStreamingStandIn();

/** Whether a handler was made with `awslambda.streamifyResponse` (middy `streamifyResponse: true`). */
export function isStreamingHandler(handler: unknown): handler is StreamingHandler {
  return typeof handler === 'function' && (handler as unknown as Record<symbol, unknown>)[STREAMING] === true;
}

/** The HTTP status and headers a streaming function sent first. */
export interface StreamedPrelude {
  statusCode: number;
  headers: Record<string, string>;
}

/** Where the gateway side of a streamed invocation sends what it reads. */
export interface StreamSink {
  /** The prelude, once (before any body byte). */
  prelude(prelude: StreamedPrelude): void;
  /** A body chunk as the function wrote it; call `done` when it may write more (backpressure). */
  chunk(chunk: Buffer, done: () => void): void;
}

/** The invocation failed; `afterPrelude` says whether the client already had the status line. */
export class StreamedInvocationError extends Error {
  override name = 'StreamedInvocationError';
  constructor(
    readonly afterPrelude: boolean,
    cause: unknown,
  ) {
    super(`the streaming function failed ${afterPrelude ? 'after' : 'before'} its prelude`, { cause });
  }
}

/**
 * Invokes a streaming handler as Lambda and API Gateway do: the response stream stand-in, the
 * prelude parsed from its first bytes (JSON, 8 NUL bytes), every later byte handed on as it is
 * written. Resolves when the function's stream ends; rejects with StreamedInvocationError when the
 * handler fails (before or after the prelude). `signal` is the client going away: the response
 * stream is destroyed, as Lambda does, and the function's writes fail.
 */
export async function invokeStreaming(
  handler: StreamingHandler,
  event: unknown,
  context: Context,
  sink: StreamSink,
  signal?: AbortSignal,
): Promise<void> {
  let pending: Buffer | undefined = Buffer.alloc(0);
  let prelude: StreamedPrelude | undefined;
  const stream = new ResponseStreamStandIn((chunk, done) => {
    if (prelude) return sink.chunk(chunk, () => done());
    pending = Buffer.concat([pending ?? Buffer.alloc(0), chunk]);
    const end = pending.indexOf(PRELUDE_DELIMITER);
    if (end < 0) return done(pending.length > MAX_PRELUDE_BYTES ? new Error('the prelude has no end') : null);
    try {
      prelude = parsePrelude(pending.subarray(0, end));
    } catch (error) {
      return done(error as Error);
    }
    const rest = pending.subarray(end + PRELUDE_DELIMITER.length);
    pending = undefined;
    sink.prelude(prelude);
    if (rest.length === 0) return done();
    sink.chunk(rest, () => done());
  });
  const leave = (): void => void stream.destroy();
  signal?.addEventListener('abort', leave, { once: true });
  try {
    await handler(event, stream, context);
    if (!prelude) {
      // A function that ended without the prelude: API Gateway passes what it wrote as a 200 body.
      prelude = { statusCode: 200, headers: {} };
      sink.prelude(prelude);
      const rest = pending;
      if (rest && rest.length > 0) await new Promise<void>((resolve) => sink.chunk(rest, resolve));
    }
  } catch (error) {
    throw new StreamedInvocationError(prelude !== undefined, error);
  } finally {
    signal?.removeEventListener('abort', leave);
  }
}

function parsePrelude(json: Buffer): StreamedPrelude {
  const value = JSON.parse(json.toString('utf8')) as { statusCode?: unknown; headers?: Record<string, unknown> };
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(value.headers ?? {})) headers[name] = String(v);
  return { statusCode: typeof value.statusCode === 'number' ? value.statusCode : 200, headers };
}

/**
 * Emulates API Gateway's streaming integration for one request: invokes the handler and writes
 * its prelude and body to `res` as they come (chunked transfer, each write as the function makes
 * it, waiting for the socket to drain). A failure after the prelude cuts the connection without
 * ending the chunked body, so no client can take what it got for a whole answer. A client that
 * goes away stops the function's writes.
 * @throws the function's error when it failed before its prelude (nothing was written: the gateway
 * answers INTEGRATION_FAILURE, as API Gateway does).
 */
export async function sendStreamingResult(res: ServerResponse, handler: StreamingHandler, event: unknown, context: Context): Promise<void> {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  try {
    await invokeStreaming(
      handler,
      event,
      context,
      {
        prelude: ({ statusCode, headers }) => {
          res.writeHead(statusCode, headers);
          res.flushHeaders();
        },
        chunk: (chunk, done) => {
          if (res.destroyed) return done();
          if (res.write(chunk)) done();
          else res.once('drain', done);
        },
      },
      gone.signal,
    );
    res.end();
  } catch (error) {
    if (error instanceof StreamedInvocationError && !error.afterPrelude && !res.headersSent) throw error.cause;
    res.destroy();
  }
}

/** A context for a streaming invocation: Lambda's whole timeout, not API Gateway's 29-second buffered budget. */
export function streamingContext(functionName: string, timeoutMs: number, requestId?: string): Context {
  return lambdaContext(functionName, requestId, timeoutMs);
}

/** What a streaming invocation sent, collected whole (tests, the bench). */
export interface CollectedStream {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Body chunks as written, with when each arrived (ms since the invocation began). */
  chunks: { bytes: number; atMs: number }[];
  /** Set when the invocation failed after its prelude: the runtime would end the stream with error trailers. */
  error?: unknown;
}

/**
 * Invokes a streaming handler with the stand-in and collects everything it sent: prelude, body,
 * and the error when it failed after the prelude. A failure before the prelude rejects.
 */
export async function collectStreaming(handler: StreamingHandler, event: unknown, context: Context): Promise<CollectedStream> {
  const started = performance.now();
  let prelude: StreamedPrelude | undefined;
  const chunks: Buffer[] = [];
  const timeline: { bytes: number; atMs: number }[] = [];
  const sink: StreamSink = {
    prelude: (p) => (prelude = p),
    chunk: (chunk, done) => {
      chunks.push(chunk);
      timeline.push({ bytes: chunk.length, atMs: performance.now() - started });
      done();
    },
  };
  let error: unknown;
  try {
    await invokeStreaming(handler, event, context, sink);
  } catch (e) {
    if (!(e instanceof StreamedInvocationError) || !e.afterPrelude) throw e;
    error = e.cause;
  }
  if (!prelude) throw new Error('the streamed invocation ended without a prelude');
  return { ...prelude, body: Buffer.concat(chunks), chunks: timeline, ...(error === undefined ? {} : { error }) };
}

/**
 * The inventory function's timeout (serverless.yml `functions.inventory.timeout`, set from the
 * bench's measurements): the budget of a streamed inventory locally, as on AWS.
 */
export const INVENTORY_TIMEOUT_MS = 180_000;
