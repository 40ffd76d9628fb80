/**
 * The runtime client each local function instance runs: what Lambda's managed Node.js runtime does
 * for a handler, over the documented Lambda Runtime API at AWS_LAMBDA_RUNTIME_API (served by the
 * stack, local/lambda/runtime-api.ts). Bundled alone (no dependency but Node) and started as
 * `node client.mjs` in the function's bundle folder (LAMBDA_TASK_ROOT), with the function's
 * environment and its NODE_OPTIONS.
 *
 * - Init: installs the `awslambda` global (streamifyResponse, HttpResponseStream), as the Node
 *   runtime does before it loads a handler, then imports the handler module `_HANDLER` names
 *   (`index.handler`: index.mjs, .js or .cjs, export `handler`). A failure is posted to
 *   /runtime/init/error and the process ends.
 * - Then, one event at a time: GET /runtime/invocation/next; a buffered handler's result is POSTed
 *   to /invocation/{id}/response as JSON, its error to /invocation/{id}/error; a streaming handler
 *   (streamifyResponse) writes to a response stream that is one chunked POST to
 *   /invocation/{id}/response with `Lambda-Runtime-Function-Response-Mode: streaming`, whose writes
 *   wait for the socket (backpressure reaches the handler), `HttpResponseStream.from` putting its
 *   JSON prelude and 8 NUL bytes before the first body byte, and a failure ending it with the
 *   trailers `Lambda-Runtime-Function-Error-Type` and `-Body`.
 *
 * AWS's own client (`aws-lambda-ric`) does the same with a native HTTP client and needs Node 22 and
 * a compiler to install; the stack can run it instead (docs/local-stack.md, LAMBDA_RUNTIME).
 * Not reproduced: the Node runtime's console patching (the service logs through Powertools, which
 * writes its own JSON lines) and the callback style of handler (the service's are async).
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { HIGH_WATER_MARK, installAwsLambdaGlobal, isStreamingHandler, type PreludeHooks } from './awslambda.js';
import { RUNTIME_TOKEN } from './runtime-token.js';

// Node's CommonJS `node:http`, as AWS's runtime client requires it: an ES import of it reads every
// export, three of which load undici (fetch's client) in each instance before its handler, time
// Lambda's own runtime does not spend and the cold starts measured here should not either.
const { Agent, request } = process.getBuiltinModule('node:http');

const RUNTIME_API = process.env.AWS_LAMBDA_RUNTIME_API ?? '127.0.0.1:9001';
// The token that makes this process its instance's runtime at the stack's Runtime API: sent on
// every call, and out of the environment before the handler loads, so the function sees Lambda's
// variables only.
const token = process.env[RUNTIME_TOKEN.variable] ?? '';
delete process.env[RUNTIME_TOKEN.variable];
const API_PATH = '/2018-06-01/runtime';
const ERROR_TYPE_HEADER = 'Lambda-Runtime-Function-Error-Type';
const ERROR_BODY_TRAILER = 'Lambda-Runtime-Function-Error-Body';

/** The one connection of the event loop (next, buffered answers), kept open as Lambda's runtime keeps it. */
const loopAgent = new Agent({ keepAlive: true, maxSockets: 1 });

type Handler = (...args: unknown[]) => unknown;

interface ErrorPayload {
  errorType: string;
  errorMessage: string;
  trace: string[];
}

/** An error as Lambda's runtime reports it: its name as type, its message, its stack as lines. */
function errorPayload(error: unknown, fallbackType = 'Error'): ErrorPayload {
  if (error instanceof Error) {
    return { errorType: error.name || fallbackType, errorMessage: error.message, trace: (error.stack ?? '').split('\n') };
  }
  return { errorType: fallbackType, errorMessage: String(error), trace: [] };
}

/** A call's headers with the runtime's token. */
const withToken = (headers: OutgoingHttpHeaders): OutgoingHttpHeaders => ({ ...headers, [RUNTIME_TOKEN.header]: token });

/** One request to the Runtime API on the loop's connection; resolves with the answer's status, headers and body. */
function call(
  method: 'GET' | 'POST',
  path: string,
  body?: string,
  headers: OutgoingHttpHeaders = {},
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  const [host, port] = RUNTIME_API.split(':');
  const options = { host, port: Number(port), method, path: `${API_PATH}${path}`, agent: loopAgent, headers: withToken(headers) };
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function postError(path: string, error: unknown, fallbackType?: string): Promise<unknown> {
  const payload = errorPayload(error, fallbackType);
  return call('POST', path, JSON.stringify(payload), { 'Content-Type': 'application/json', [ERROR_TYPE_HEADER]: payload.errorType });
}

/**
 * The response stream a streaming handler writes to: one chunked POST to the Runtime API. A write
 * completes when the socket took it, so a client that reads slowly holds the handler's writes. The
 * request goes out with the first write (or the end), so `setContentType` can still set its header.
 */
class ResponseStream extends Writable implements PreludeHooks {
  _onBeforeFirstWrite: PreludeHooks['_onBeforeFirstWrite'];
  private started = false;
  private readonly req;
  /** Settles when the Runtime API answered the POST (after its last byte), or the connection failed. */
  readonly answered: Promise<void>;

  constructor(requestId: string, highWaterMark: number) {
    super({ highWaterMark });
    const [host, port] = RUNTIME_API.split(':');
    this.req = request({
      host,
      port: Number(port),
      method: 'POST',
      path: `${API_PATH}/invocation/${requestId}/response`,
      // A connection of its own: the loop's stays free for the next event.
      agent: false,
      headers: withToken({
        'Lambda-Runtime-Function-Response-Mode': 'streaming',
        'Transfer-Encoding': 'chunked',
        'Content-Type': 'application/octet-stream',
        Trailer: `${ERROR_TYPE_HEADER}, ${ERROR_BODY_TRAILER}`,
      }),
    });
    this.answered = new Promise((resolve, reject) => {
      this.req.on('response', (res: IncomingMessage) => {
        res.resume();
        res.on('end', () => resolve());
        res.on('error', reject);
      });
      this.req.on('error', (error) => {
        reject(error);
        this.destroy(error);
      });
    });
    // Awaited by the invocation; a failure here is the invocation's, not an unhandled rejection.
    this.answered.catch(() => undefined);
  }

  setContentType(type: string): void {
    if (this.started) throw new Error('Cannot set content-type, too late.');
    this.req.setHeader('Content-Type', type);
  }

  private preludeFirst(): void {
    if (this.started) return;
    this.started = true;
    this._onBeforeFirstWrite?.((chunk) => this.req.write(chunk));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.preludeFirst();
    this.req.write(chunk, (error) => done(error ?? null));
  }

  override _final(done: (error?: Error | null) => void): void {
    this.preludeFirst();
    this.req.end(() => done());
  }

  /** Ends the POST with the error trailers, as Lambda's runtime does for a failed streaming invocation. */
  fail(error: unknown): Promise<void> {
    const payload = errorPayload(error);
    if (this.req.destroyed || this.req.writableEnded) return Promise.resolve();
    this.req.addTrailers({
      [ERROR_TYPE_HEADER]: payload.errorType,
      [ERROR_BODY_TRAILER]: Buffer.from(JSON.stringify(payload)).toString('base64'),
    });
    return new Promise((resolve) => this.req.end(() => resolve()));
  }
}

/** The handler `_HANDLER` names, from the task root: `index.handler` is export `handler` of index.mjs, .js or .cjs. */
async function loadHandler(): Promise<Handler> {
  const spec = process.env._HANDLER ?? 'index.handler';
  const dot = spec.lastIndexOf('.');
  const [moduleName, exportName] = [spec.slice(0, dot), spec.slice(dot + 1)];
  const root = process.env.LAMBDA_TASK_ROOT ?? process.cwd();
  const file = ['.mjs', '.js', '.cjs'].map((ext) => join(root, `${moduleName}${ext}`)).find((f) => existsSync(f));
  if (!file) throw Object.assign(new Error(`Cannot find module '${moduleName}'`), { name: 'Runtime.ImportModuleError' });
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const handler = module[exportName];
  if (typeof handler !== 'function') {
    throw Object.assign(new Error(`${spec} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  }
  return handler as Handler;
}

/** The context object a Node handler gets, from the invocation's headers and the runtime's variables. */
function contextOf(requestId: string, headers: IncomingMessage['headers']): Record<string, unknown> {
  const deadline = Number(headers['lambda-runtime-deadline-ms']);
  const env = process.env;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: headers['lambda-runtime-invoked-function-arn'],
    memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: requestId,
    logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

async function invokeBuffered(handler: Handler, requestId: string, event: unknown, context: Record<string, unknown>): Promise<void> {
  let result: unknown;
  try {
    result = await handler(event, context);
  } catch (error) {
    await postError(`/invocation/${requestId}/error`, error);
    return;
  }
  await call('POST', `/invocation/${requestId}/response`, JSON.stringify(result ?? null), { 'Content-Type': 'application/json' });
}

async function invokeStreaming(handler: Handler, requestId: string, event: unknown, context: Record<string, unknown>): Promise<void> {
  const highWaterMark = (handler as unknown as Record<symbol, number | undefined>)[HIGH_WATER_MARK] ?? 64 * 1024;
  const stream = new ResponseStream(requestId, highWaterMark);
  try {
    await handler(event, stream, context);
    if (!stream.writableFinished) {
      await new Promise<void>((resolve, reject) => {
        if (!stream.writableEnded) return reject(new Error('Response stream is not finished.'));
        stream.once('finish', resolve);
        stream.once('error', reject);
      });
    }
    await stream.answered;
  } catch (error) {
    // The Runtime API cut the POST (the client went away): nothing left to tell it.
    await stream.fail(error).catch(() => undefined);
    await stream.answered.catch(() => undefined);
  }
}

/** How long the runtime waits before it asks again for an event it was refused, at first and at most (doubling between). */
const RETRY_FIRST_MS = 50;
const RETRY_MOST_MS = 1_000;

/**
 * The next event: GET /invocation/next until it answers 200 with a request id. A refusal (a 409, a
 * 5xx) or a connection that drops is waited out and asked again, as a runtime must: what it answers
 * then is no event, and its body is never read as one. Only a Runtime API that is gone (nothing
 * listens on its port any more: its stack stopped) ends the runtime, as Lambda ends an environment.
 */
async function nextInvocation(): Promise<{ headers: IncomingMessage['headers']; body: Buffer }> {
  for (let waitMs = RETRY_FIRST_MS; ; waitMs = Math.min(2 * waitMs, RETRY_MOST_MS)) {
    try {
      const next = await call('GET', '/invocation/next');
      if (next.status === 200 && next.headers['lambda-runtime-aws-request-id']) return next;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') process.exit(0);
    }
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

async function main(): Promise<void> {
  installAwsLambdaGlobal();
  let handler: Handler;
  try {
    handler = await loadHandler();
  } catch (error) {
    await postError('/init/error', error, 'Runtime.ImportModuleError').catch(() => undefined);
    process.exit(1);
  }
  for (;;) {
    const next = await nextInvocation();
    const requestId = String(next.headers['lambda-runtime-aws-request-id']);
    const traceId = next.headers['lambda-runtime-trace-id'];
    if (typeof traceId === 'string') process.env._X_AMZN_TRACE_ID = traceId;
    else delete process.env._X_AMZN_TRACE_ID;
    const event = JSON.parse(next.body.toString('utf8')) as unknown;
    const context = contextOf(requestId, next.headers);
    if (isStreamingHandler(handler)) await invokeStreaming(handler, requestId, event, context);
    else await invokeBuffered(handler, requestId, event, context);
  }
}

// An error nothing caught ends the runtime, as on Lambda (the invocation in flight fails with Runtime.ExitError).
process.on('uncaughtException', (error) => {
  process.stderr.write(`${JSON.stringify({ level: 'ERROR', message: 'Uncaught exception', ...errorPayload(error) })}\n`);
  process.exit(129);
});
process.on('unhandledRejection', (reason) => {
  process.stderr.write(
    `${JSON.stringify({ level: 'ERROR', message: 'Unhandled rejection', ...errorPayload(reason, 'Runtime.UnhandledPromiseRejection') })}\n`,
  );
  process.exit(128);
});

void main();
