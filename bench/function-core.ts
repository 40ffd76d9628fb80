/**
 * The bench's process on the function's core (bench/cores.ts), on the Node the sandboxes run:
 * what must run where the function runs to be compared with it. Started by bench/processes.ts
 * startFunctionCore with the inventory function's environment (its variables and NODE_OPTIONS, as a
 * sandbox instance has them), it answers requests over the IPC channel, one at a time, each timed
 * here, where it ran:
 * - the floors' readers (bench/floors.ts): the wire and read floors over raw HTTP, the CPU floor on
 *   the wire floor's kept pages, the observations' floors through the bare SDK;
 * - the inventory's deployed bundle called in this process, with the runtime's `awslambda` global
 *   and a response stream that counts what it is given: the same work as a warm sandbox instance
 *   without the process boundary (its Runtime API, its chunked POST, the reader on the other core);
 * - the compression levels on a realistic inventory (bench/compression-levels.ts).
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { Key } from '../lib/data-format/keys.js';
import { GZIP_LEVEL } from '../lib/json-array-stream.js';
import { installAwsLambdaGlobal, PRELUDE_CONTENT_TYPE, type PreludeHooks } from '../local/lambda/awslambda.js';
import { compressionLevels } from './compression-levels.js';
import { bareClient, cpuFloor, sameRequestsFloor, type WireRun, windowFloor, wireFloor } from './floors.js';

/** What the parent may ask, by name, with its arguments; each answers with what it measured. */
const OPERATIONS = {
  /** The wire floor (or with `parse`, the read floor); with `cpuFloorPages`, the CPU floor on that many of its first pages. */
  async wire(args: { endpoint: string; table: string; pk: string; parse?: boolean; cpuFloorPages?: number; gzipLevel?: number }) {
    const run: WireRun = await wireFloor(args.endpoint, args.table, args.pk, {
      parse: args.parse ?? false,
      keepPages: args.cpuFloorPages ?? 0,
    });
    const cpu = run.kept.length > 0 ? cpuFloor(run.kept, args.gzipLevel ?? GZIP_LEVEL) : undefined;
    return { ms: run.ms, firstPageMs: run.firstPageMs, pages: run.pages, bytes: run.bytes, cpu };
  },
  async windowFloor(args: { endpoint: string; table: string; pk: string; from: string; to: string }) {
    const started = performance.now();
    const samples = await windowFloor(client(args.endpoint), args.table, args.pk, args.from, args.to);
    return { ms: performance.now() - started, samples };
  },
  async sameRequestsFloor(args: {
    endpoint: string;
    tables: { dataTable: string; auditTable: string };
    keys: { policy: Key; durable: Key; connection: Key };
    window: { pk: string; from: string; to: string };
    audit: Record<string, unknown>;
  }) {
    const started = performance.now();
    const samples = await sameRequestsFloor(client(args.endpoint), args.tables, args.keys, args.window, args.audit);
    return { ms: performance.now() - started, samples };
  },
  invokeInventory: (args: { bundle: string; event: unknown; timeoutMs: number }) =>
    invokeInProcess(args.bundle, args.event, args.timeoutMs),
  compressionLevels: (args: { agents: number; now: string }) => compressionLevels(args.agents, new Date(args.now)),
};
export type FunctionCoreOperations = typeof OPERATIONS;

/** The bare SDK client of the floors, one per engine, made once (its connections kept as a warm function keeps its own). */
const clients = new Map<string, ReturnType<typeof bareClient>>();
function client(endpoint: string): ReturnType<typeof bareClient> {
  let c = clients.get(endpoint);
  if (!c) {
    c = bareClient(endpoint);
    clients.set(endpoint, c);
  }
  return c;
}

/** A response stream as the runtime's, counting the body: the prelude's status kept, the body's bytes counted as they come, then dropped. */
class CountingStream extends Writable implements PreludeHooks {
  _onBeforeFirstWrite: PreludeHooks['_onBeforeFirstWrite'];
  contentType = 'application/octet-stream';
  prelude = '';
  bytes = 0;
  firstByteMs: number | undefined;
  private started = false;

  constructor(private readonly since: number) {
    super();
  }

  setContentType(type: string): void {
    this.contentType = type;
  }

  private preludeFirst(): void {
    if (this.started) return;
    this.started = true;
    this._onBeforeFirstWrite?.((chunk) => {
      if (typeof chunk === 'string') this.prelude += chunk;
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.preludeFirst();
    if (chunk.length > 0) this.firstByteMs ??= performance.now() - this.since;
    this.bytes += chunk.length;
    done();
  }

  override _final(done: () => void): void {
    this.preludeFirst();
    done();
  }
}

type StreamingHandler = (event: unknown, stream: Writable, context: Record<string, unknown>) => Promise<unknown>;
const handlers = new Map<string, Promise<StreamingHandler>>();

/** The bundle's handler, imported once (a warm instance), the runtime's global installed first. */
function handlerOf(bundle: string): Promise<StreamingHandler> {
  let loaded = handlers.get(bundle);
  if (!loaded) {
    installAwsLambdaGlobal();
    loaded = import(pathToFileURL(bundle).href).then((module: { handler: StreamingHandler }) => module.handler);
    handlers.set(bundle, loaded);
  }
  return loaded;
}

/** One invocation of a streaming bundle in this process: its status, bytes, first byte, time and CPU. */
async function invokeInProcess(bundle: string, event: unknown, timeoutMs: number) {
  const handler = await handlerOf(bundle);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const stream = new CountingStream(started);
  const deadline = Date.now() + timeoutMs;
  const context = {
    awsRequestId: randomUUID(),
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  let failedWith: string | undefined;
  try {
    await handler(event, stream, context);
    if (!stream.writableFinished) await new Promise((resolve) => stream.once('finish', resolve));
  } catch (error) {
    failedWith = (error as Error).name;
  }
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const status =
    stream.contentType === PRELUDE_CONTENT_TYPE && stream.prelude
      ? ((JSON.parse(stream.prelude) as { statusCode?: number }).statusCode ?? 200)
      : 200;
  return { status, bytes: stream.bytes, firstByteMs: stream.firstByteMs ?? ms, ms, cpuMs: (used.user + used.system) / 1000, failedWith };
}

interface Request {
  id: number;
  op: keyof typeof OPERATIONS;
  args: never;
}

process.on('message', (message: Request) => {
  const run = OPERATIONS[message.op] as (args: unknown) => Promise<unknown> | unknown;
  Promise.resolve()
    .then(() => run(message.args))
    .then(
      (result) => process.send?.({ id: message.id, result }),
      (error: unknown) =>
        process.send?.({ id: message.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
});
process.on('disconnect', () => process.exit(0));
process.stdout.write(`function core ready on Node ${process.versions.node}\n`);
