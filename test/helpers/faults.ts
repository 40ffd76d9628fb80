import { createServer as createHttpServer, type Server as HttpServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { bind } from '../../local/ports.js';

/**
 * Real network faults, for what a real engine cannot produce on demand: an address where nothing
 * listens (connection refused), a listener that accepts connections and never answers (timeout),
 * and one that resets every connection once the request arrives (a TCP RST: ECONNRESET).
 * answeringEndpoint is a fault injector of another kind: a real HTTP server that answers every
 * request with the same 200 body, for answers no DynamoDB engine gives (`{}`, items that are not
 * objects); tests that use it say so in their names.
 */

const SLICE = 1500;
const sliceStart = 20_000 + (Number(process.env.VITEST_POOL_ID ?? 0) % 8) * SLICE;
let nextInSlice = Math.floor(Math.random() * SLICE);

/**
 * A port nothing listens on right now, drawn below the system's ephemeral range (32768 and up on
 * Linux), from a slice of its own for each vitest worker: a port the system picks for a listener
 * on port 0, or for an outgoing connection, can then never be this one, so a stack that another
 * test starts at the same moment cannot take it before the test uses it.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < SLICE; tries++) {
    const port = sliceStart + (nextInSlice++ % SLICE);
    const server = createHttpServer();
    // Bound as the local stack binds its public listener (every IPv4 address), so any listener counts.
    if (typeof (await bind(server, port, '0.0.0.0')) === 'number') {
      await new Promise<void>((r) => server.close(() => r()));
      return port;
    }
  }
  throw new Error(`no unused port in ${sliceStart}-${sliceStart + SLICE - 1}`);
}

/** An address where nothing listens (a port from freePort). */
export async function closedPortEndpoint(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

export async function silentEndpoint(): Promise<{ endpoint: string; close(): Promise<void> }> {
  return listenOnLoopback(createServer(() => undefined));
}

/** A listener that reads the start of each request and then resets the connection (RST, not FIN). */
export async function resettingEndpoint(): Promise<{ endpoint: string; resets: () => number; close(): Promise<void> }> {
  let resets = 0;
  const server: Server = createServer((socket) => {
    socket.once('data', () => {
      resets += 1;
      socket.resetAndDestroy();
    });
    socket.on('error', () => undefined);
  });
  return { ...(await listenOnLoopback(server)), resets: () => resets };
}

/**
 * Listens on an ephemeral loopback port (a TCP or an HTTP server); `close` drops open connections,
 * so a held request or a silent socket cannot keep it open.
 */
async function listenOnLoopback(server: Server | HttpServer): Promise<{ endpoint: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => r());
      }),
  };
}

/** Passes one request on to the engine at `upstream` and its answer back, as it comes. */
function forward(upstream: URL, req: IncomingMessage, res: ServerResponse): void {
  const onward = request(
    // The upstream's own name in Host, as a reverse proxy sends it: the local stack answers only its own names.
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  onward.on('error', () => res.destroy());
  req.pipe(onward);
}

/** What a fault injector answers to one DynamoDB operation (the `X-Amz-Target` after the dot). */
export interface InjectedAnswer {
  statusCode?: number;
  contentType?: string;
  body: string;
}

/**
 * An HTTP server answering every request with `answer`: a 200 with that body as DynamoDB's JSON
 * when it is a string, else what the function gives for the request's operation (a fault injector
 * or a stand-in, named so by the tests that use it).
 */
export async function answeringEndpoint(
  answer: string | ((operation: string) => InjectedAnswer),
): Promise<{ endpoint: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = createHttpServer((req, res) => {
    requests += 1;
    const operation =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    const {
      statusCode = 200,
      contentType = 'application/x-amz-json-1.0',
      body,
    } = typeof answer === 'string' ? { body: answer } : answer(operation);
    req.resume();
    req.on('end', () => {
      res.writeHead(statusCode, { 'Content-Type': contentType });
      res.end(body);
    });
  });
  return { ...(await listenOnLoopback(server)), requests: () => requests };
}

/**
 * A proxy in front of a real engine that forwards every request but holds, unanswered, those whose
 * DynamoDB operation `holds` names (`X-Amz-Target`): a fault injector for "the audit table hangs
 * while the data table answers", which no engine does on demand.
 */
export async function holdingProxy(
  target: string,
  holds: (operation: string) => boolean,
): Promise<{ endpoint: string; held: () => number; close(): Promise<void> }> {
  let held = 0;
  const upstream = new URL(target);
  const server = createHttpServer((req, res) => {
    const operation =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    if (holds(operation)) {
      held += 1;
      req.resume();
      return;
    }
    forward(upstream, req, res);
  });
  return { ...(await listenOnLoopback(server)), held: () => held };
}

/**
 * A proxy in front of a real engine that forwards every request, but holds those whose DynamoDB
 * operation `holds` names while it is closed, and passes them on when it opens: a fault injector
 * for "the store answers late, when the test says", which keeps a function busy with its event for
 * as long as a test needs.
 */
export async function gatedProxy(
  target: string,
  holds: (operation: string) => boolean,
): Promise<{ endpoint: string; close(): Promise<void>; shut(): void; open(): void; held: () => number }> {
  const upstream = new URL(target);
  let waiting: Array<() => void> | undefined;
  let held = 0;
  const server = createHttpServer((req, res) => {
    const operation =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    if (!waiting || !holds(operation)) return forward(upstream, req, res);
    held += 1;
    waiting.push(() => forward(upstream, req, res));
  });
  return {
    ...(await listenOnLoopback(server)),
    held: () => held,
    shut() {
      waiting ??= [];
    },
    open() {
      const released = waiting ?? [];
      waiting = undefined;
      for (const pass of released) pass();
    },
  };
}

/**
 * A proxy in front of a real engine that forwards every request and counts them: how many it
 * received, the most it had in flight (received, not yet answered) at once, and the DynamoDB
 * `Query` calls among them. With `failFrom`, from the `failFrom`-th Query on (1-based) it resets
 * the connection instead (a fault injector for "the store fails after the first pages", which no
 * engine does on demand).
 */
export async function countingProxy(
  target: string,
  options: { failFrom?: number } = {},
): Promise<{ endpoint: string; received: () => number; mostInFlight: () => number; queries: () => number; close(): Promise<void> }> {
  const upstream = new URL(target);
  let received = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  let queries = 0;
  const server = createHttpServer((req, res) => {
    received += 1;
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    res.on('close', () => (inFlight -= 1));
    const operation =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    if (operation === 'Query') {
      queries += 1;
      if (options.failFrom !== undefined && queries >= options.failFrom) {
        req.resume();
        req.socket.resetAndDestroy();
        return;
      }
    }
    forward(upstream, req, res);
  });
  return { ...(await listenOnLoopback(server)), received: () => received, mostInFlight: () => mostInFlight, queries: () => queries };
}

/** One request a recording proxy passed on: its DynamoDB operation and its JSON body. */
export interface RecordedRequest {
  operation: string;
  input: Record<string, unknown>;
}

/**
 * A proxy in front of a real engine that forwards every request and records it (its operation and
 * its body), so a test sees what the service asked of DynamoDB: an observation, not a fake.
 */
export async function recordingProxy(target: string): Promise<{ endpoint: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const requests: RecordedRequest[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      requests.push({ operation, input: JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown> });
      const onward = request(
        // The upstream's own name in Host, as a reverse proxy sends it: the local stack answers only its own names.
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      onward.on('error', () => res.destroy());
      onward.end(body);
    });
  });
  return { ...(await listenOnLoopback(server)), requests };
}
