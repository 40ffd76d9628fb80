import { timingSafeEqual } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { guarded, NO_PAGES, sendRefusal } from '../guard.js';
import { BodyTooLargeError, readBoundedBody } from '../listener-io.js';
import { RUNTIME_TOKEN } from './runtime-token.js';

/**
 * The Lambda Runtime API of one local function instance, as Lambda serves it to a runtime inside
 * its execution environment (AWS's documentation, "Using the Lambda runtime API for custom
 * runtimes", and its response-streaming extension): the runtime asks for an event with GET
 * /2018-06-01/runtime/invocation/next, which is answered when there is one (with its request id,
 * deadline and function ARN as headers), and answers it with POST …/invocation/{id}/response
 * (buffered, or streaming: `Lambda-Runtime-Function-Response-Mode: streaming`, chunked, error
 * trailers), POST …/invocation/{id}/error, or, when it cannot start, POST …/runtime/init/error. Each
 * POST is answered 202. One server per instance, on a loopback port (AWS_LAMBDA_RUNTIME_API).
 *
 * Its events carry the callers' bearer tokens, and an answer posted to it is what the gateway
 * sends back, so it admits its own instance's runtime and nothing else: behind the listeners' guard
 * (local/guard.ts: its own loopback name and port, no web page at all), and then only a
 * request of the instance's own runtime (`RuntimeOwner`), whatever else on this machine can reach
 * loopback (another program, or a server of the stack made to fetch a URL): our runtime client
 * sends on every call the token only its process was given, in its environment; AWS's client,
 * which sends no such token, is known by its connection, held by the instance's own process (read
 * from /proc). Anything else is refused (403) before anything changes. And one runtime asks at a
 * time: a second GET /next while one waits is refused (409), and the event goes to the one that
 * asked first.
 */

const API = '/2018-06-01/runtime';
/** Lambda's limit on a buffered (synchronous) response payload. */
export const MAX_BUFFERED_RESPONSE_BYTES = 6 * 1024 * 1024;
/** An error report (init or invocation) is small; anything longer is cut there. */
const MAX_ERROR_BYTES = 1024 * 1024;

/** A function error as Lambda reports it: a type (`Runtime.ExitError`, `Sandbox.Timedout`, an error's name) and a message. */
export interface FunctionError {
  errorType: string;
  errorMessage: string;
}

/** An event for the runtime, with what its GET /next answer carries in headers. */
export interface RuntimeInvocation {
  requestId: string;
  event: unknown;
  /** Epoch milliseconds (`Lambda-Runtime-Deadline-Ms`), from which the context's remaining time is read. */
  deadlineMs: number;
  functionArn: string;
  traceId?: string;
}

/** How the runtime answered an invocation. */
export type RuntimeAnswer =
  | { kind: 'buffered'; payload: Buffer }
  | { kind: 'error'; error: FunctionError }
  | {
      kind: 'stream';
      /** The POST's Content-Type: `application/vnd.awslambda.http-integration-response` when the handler sent an HTTP prelude. */
      contentType: string | undefined;
      /** The POST's body as it arrives; pause it and the runtime's writes wait (TCP flow control). */
      body: Readable;
      /** Settles when the body ended: with the error of its trailers or of a cut connection, else undefined. */
      ended: Promise<FunctionError | undefined>;
      /** Cuts the POST's connection, as Lambda does when the client goes away: the handler's writes fail. */
      abort(): void;
      /**
       * Resolves when the runtime asks for an event again after this one was handed to it, whichever
       * connection speaks first (its ask and its cut POST arrive on two); a dead runtime never asks.
       */
      nextAsked: Promise<void>;
    };

interface Pending {
  invocation: RuntimeInvocation;
  answer: (answer: RuntimeAnswer) => void;
  /** Settles once it is answered. */
  answered: Promise<void>;
  /** Settles at the runtime's first ask for an event after this one was delivered. */
  nextAsked: Promise<void>;
  asked: () => void;
}

/** How long an answer may trail the runtime's next request for an event (they come on two connections). */
const ANSWER_GRACE_MS = 1_000;

export interface RuntimeApi {
  /** `host:port`, the runtime's AWS_LAMBDA_RUNTIME_API. */
  readonly address: string;
  /** Resolves when the runtime first asks for an event (its init is over); rejects with the init error it posts. */
  readonly initialized: Promise<void>;
  /**
   * Gives the runtime an event (answered to its next GET /next) and resolves with its answer. Never
   * rejects: an instance that dies first is the caller's to report (see `fail`).
   */
  invoke(invocation: RuntimeInvocation): Promise<RuntimeAnswer>;
  /** Ends the invocation in flight (the instance died or timed out), answering it with this error. */
  fail(error: FunctionError): void;
  /** Called each time the runtime asks for an event again: its previous invocation is over. */
  onNext(listener: () => void): void;
  close(): Promise<void>;
}

function readError(body: Buffer, header: string | string[] | undefined, fallbackType: string): FunctionError {
  let parsed: { errorType?: unknown; errorMessage?: unknown } = {};
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    // A body that is no JSON: the header, or the fallback, names the error.
  }
  const errorType = typeof header === 'string' && header ? header : typeof parsed.errorType === 'string' ? parsed.errorType : fallbackType;
  return { errorType, errorMessage: typeof parsed.errorMessage === 'string' ? parsed.errorMessage : '' };
}

function accepted(res: ServerResponse): void {
  res.writeHead(202, { 'Content-Type': 'application/json' });
  res.end('{"status":"OK"}');
}

function refused(res: ServerResponse, status: number, errorType: string, errorMessage: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ errorType, errorMessage }));
}

/** How a stream's `ended` settles when its connection closed before its end (the runtime may have died with it). */
export const STREAM_CUT: FunctionError = Object.freeze({
  errorType: 'Runtime.ExitError',
  errorMessage: 'the response stream was cut before its end',
});

/**
 * How a Runtime API knows its instance's runtime: by the token given to our runtime client alone,
 * or (AWS's client, which sends only what Lambda's Runtime API takes) by the process that holds
 * the request's connection.
 */
export type RuntimeOwner = { token: string } | { pid: () => number };

/**
 * Whether process `pid` holds this end of a loopback connection: the kernel's socket table gives
 * the connection's inode (the peer's end: its local port is the socket's remote one), and the
 * process's open files name it (Linux /proc; elsewhere no process is known to hold it).
 */
export function connectionHeldBy(pid: number, socket: Socket): boolean {
  const hex = (port: number | undefined): string => (port ?? 0).toString(16).toUpperCase().padStart(4, '0');
  const [peer, own] = [hex(socket.remotePort), hex(socket.localPort)];
  try {
    const row = readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .find((fields) => fields[1]?.endsWith(`:${peer}`) && fields[2]?.endsWith(`:${own}`));
    const inode = row?.[9];
    if (!inode || inode === '0') return false;
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** Whether a request comes from the instance's own runtime; a connection found to be its runtime's is remembered. */
function ownerCheck(owner: RuntimeOwner): (req: IncomingMessage) => boolean {
  if ('token' in owner) {
    const expected = Buffer.from(owner.token);
    return (req) => {
      const sent = req.headers[RUNTIME_TOKEN.header];
      const given = Buffer.from(typeof sent === 'string' ? sent : '');
      return given.length === expected.length && timingSafeEqual(given, expected);
    };
  }
  const known = new WeakSet<Socket>();
  return (req) => {
    if (known.has(req.socket)) return true;
    if (!connectionHeldBy(owner.pid(), req.socket)) return false;
    known.add(req.socket);
    return true;
  };
}

/** Starts the Runtime API of one instance on a loopback port, answering `owner`'s runtime only. */
export async function startRuntimeApi(owner: RuntimeOwner): Promise<RuntimeApi> {
  const ownRuntime = ownerCheck(owner);
  let initialize!: { resolve: () => void; reject: (error: FunctionError) => void };
  const initialized = new Promise<void>((resolve, reject) => {
    initialize = { resolve, reject };
  });
  // Awaited by the instance; an instance that never initialises is its concern, not an unhandled rejection.
  initialized.catch(() => undefined);
  let waiting: ServerResponse | undefined;
  let queued: Pending | undefined;
  let current: Pending | undefined;
  /** The invocation handed to the runtime last, until the runtime asks for another. */
  let delivered: Pending | undefined;
  let nextListener: () => void = () => undefined;

  const deliver = (res: ServerResponse, pending: Pending): void => {
    const { invocation } = pending;
    current = pending;
    delivered = pending;
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Lambda-Runtime-Aws-Request-Id': invocation.requestId,
      'Lambda-Runtime-Deadline-Ms': String(invocation.deadlineMs),
      'Lambda-Runtime-Invoked-Function-Arn': invocation.functionArn,
      ...(invocation.traceId ? { 'Lambda-Runtime-Trace-Id': invocation.traceId } : {}),
    });
    res.end(JSON.stringify(invocation.event));
  };

  /** Answers the invocation in flight once; a later answer for it is refused. */
  const answerCurrent = (answer: RuntimeAnswer): void => {
    const pending = current;
    current = undefined;
    pending?.answer(answer);
  };

  const onResponse = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.headers['lambda-runtime-function-response-mode'] === 'streaming') {
      const ended = new Promise<FunctionError | undefined>((resolve) => {
        req.once('end', () => {
          const type = req.trailers['lambda-runtime-function-error-type'];
          if (!type) return resolve(undefined);
          let message = '';
          try {
            const body = JSON.parse(Buffer.from(req.trailers['lambda-runtime-function-error-body'] ?? '', 'base64').toString('utf8')) as {
              errorMessage?: unknown;
            };
            message = typeof body.errorMessage === 'string' ? body.errorMessage : '';
          } catch {
            // Trailers without a readable body: the type says enough.
          }
          resolve({ errorType: type, errorMessage: message });
        });
        req.once('close', () => {
          if (!req.complete) resolve(STREAM_CUT);
        });
      });
      answerCurrent({
        kind: 'stream',
        contentType: req.headers['content-type'],
        body: req,
        ended,
        abort: () => req.socket.destroy(),
        nextAsked: current?.nextAsked ?? Promise.resolve(),
      });
      await ended;
      if (req.complete && !res.destroyed) accepted(res);
      return;
    }
    try {
      answerCurrent({ kind: 'buffered', payload: await readBoundedBody(req, MAX_BUFFERED_RESPONSE_BYTES) });
      accepted(res);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      answerCurrent({
        kind: 'error',
        error: { errorType: 'Function.ResponseSizeTooLarge', errorMessage: 'Response payload size exceeded maximum allowed payload size.' },
      });
      refused(res, 413, 'Function.ResponseSizeTooLarge', 'Response payload size exceeded maximum allowed payload size.');
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Before anything else, so that another program's request changes nothing (its instance's event above all).
    if (!ownRuntime(req)) {
      req.resume();
      return sendRefusal(res, "This Runtime API answers its own instance's runtime only.");
    }
    const path = req.url ?? '';
    if (req.method === 'GET' && path === `${API}/invocation/next`) {
      // One runtime per instance, asking for one event at a time: another asker is refused before anything changes.
      if (waiting && !waiting.destroyed) {
        return sendRefusal(
          res,
          'This Runtime API already has a runtime waiting for the next event; an instance asks for one event at a time.',
          409,
        );
      }
      // The previous invocation is over (answered, or its stream cut); the runtime is free. A runtime
      // may ask on its loop's connection before its answer, sent on another, has arrived (AWS's
      // client ends a stream that failed before its first byte that way): the answer gets a moment.
      const unanswered = current;
      if (unanswered) {
        await Promise.race([unanswered.answered, new Promise((resolve) => setTimeout(resolve, ANSWER_GRACE_MS))]);
        if (current === unanswered) {
          answerCurrent({
            kind: 'error',
            error: { errorType: 'Runtime.NoResponse', errorMessage: 'the runtime asked for the next event without answering' },
          });
        }
      }
      initialize.resolve();
      delivered?.asked();
      delivered = undefined;
      nextListener();
      if (queued) {
        const pending = queued;
        queued = undefined;
        deliver(res, pending);
      } else {
        waiting = res;
        res.once('close', () => {
          if (waiting === res) waiting = undefined;
        });
      }
      return;
    }
    if (req.method === 'POST' && path === `${API}/init/error`) {
      initialize.reject(
        readError(await readBoundedBody(req, MAX_ERROR_BYTES), req.headers['lambda-runtime-function-error-type'], 'Runtime.Unknown'),
      );
      return accepted(res);
    }
    const answer = new RegExp(`^${API}/invocation/([^/]+)/(response|error)$`).exec(path);
    if (req.method === 'POST' && answer) {
      const [, id = '', what] = answer;
      if (!current || decodeURIComponent(id) !== current.invocation.requestId) {
        req.resume();
        return refused(res, 400, 'InvalidRequestID', 'no invocation in flight has this request id');
      }
      if (what === 'error') {
        const body = await readBoundedBody(req, MAX_ERROR_BYTES).catch(() => Buffer.alloc(0));
        answerCurrent({ kind: 'error', error: readError(body, req.headers['lambda-runtime-function-error-type'], 'Runtime.Unknown') });
        return accepted(res);
      }
      return onResponse(req, res);
    }
    req.resume();
    refused(res, 404, 'NotFound', 'no such Runtime API path');
  };

  const server: Server = createServer(
    { requestTimeout: 0, keepAliveTimeout: 0 },
    guarded(NO_PAGES, (req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) refused(res, 500, 'Runtime.Unknown', 'the Runtime API failed');
        else res.destroy();
      });
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    address: `127.0.0.1:${port}`,
    initialized,
    invoke(invocation) {
      return new Promise<RuntimeAnswer>((resolve) => {
        let answered!: () => void;
        let asked!: () => void;
        const pending: Pending = {
          invocation,
          answer: (a) => {
            answered();
            resolve(a);
          },
          answered: new Promise<void>((done) => {
            answered = done;
          }),
          nextAsked: new Promise<void>((done) => {
            asked = done;
          }),
          asked: () => asked(),
        };
        if (waiting) {
          const res = waiting;
          waiting = undefined;
          deliver(res, pending);
        } else queued = pending;
      });
    },
    fail(error) {
      if (queued) {
        const pending = queued;
        queued = undefined;
        pending.answer({ kind: 'error', error });
      }
      answerCurrent({ kind: 'error', error });
    },
    onNext(listener) {
      nextListener = listener;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
