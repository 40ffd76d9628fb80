import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../infra/build.js';
import { INVENTORY_HEAP_FLAGS } from '../infra/inventory-heap.js';

/**
 * The inventory function's young-generation flag: the processes that run its handler many times
 * (the bench itself, the local stack) run with it, as the function does; its old-space cap is for
 * one invocation in a fresh process (freshInvocation), not for a bench holding the tenants' data.
 */
export const INVENTORY_YOUNG_GENERATION: readonly string[] = INVENTORY_HEAP_FLAGS.filter((flag) =>
  flag.startsWith('--max-semi-space-size='),
);

/** A child process the bench started, stopped by its own id when the bench ends. */
export interface Child {
  process: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

const children = new Set<Child>();

/** Stops every child this bench started (by their ids), e.g. on exit or failure. */
export async function stopChildren(): Promise<void> {
  await Promise.all([...children].map((c) => c.stop()));
}

/** Starts `node [--import tsx] script` and resolves once `ready` matches its output. */
async function startChild(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
  nodeFlags: readonly string[] = [],
  timeoutMs = 60_000,
): Promise<Child & { match: RegExpExecArray }> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const handle: Child = {
    process: child,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        children.delete(handle);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
  children.add(handle);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = ready.exec(out);
    if (match) return { ...handle, match };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${script} did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The embedded engine in its own process (DynamoDB is remote: its CPU is not the service's). */
export async function startEngine(): Promise<Child & { endpoint: string }> {
  const child = await startChild('bench/engine-child.ts', {}, /^(http:\/\/\S+)\n/m);
  return { ...child, endpoint: child.match[1]! };
}

/**
 * The local stack of `npm start` in its own process, on free ports, on the given engine, unseeded,
 * with the young generation the inventory function has (INVENTORY_YOUNG_GENERATION).
 */
export async function startStack(env: Record<string, string>): Promise<Child & { publicUrl: string; privateUrl: string }> {
  const child = await startChild(
    'infra/local/start.ts',
    { PORT: '0', PRIVATE_PORT: '0', SEED: 'none', POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', ...env },
    /public\s+(http:\/\/\S+?)\/api\/agents[\s\S]*private\s+(http:\/\/\S+?)\/api\/mcp\/endpoint/,
    INVENTORY_YOUNG_GENERATION,
  );
  return { ...child, publicUrl: child.match[1]!, privateUrl: child.match[2]! };
}

/** What one fresh Lambda-like process reported (bench/lambda-runner.mjs). */
export interface FreshRun {
  status: number;
  responseBytes: number;
  importMs: number;
  invokeMs: number;
  /** From the end of the import to the first body byte (a streamed answer; the whole answer otherwise). */
  firstByteMs: number;
  maxRssMiB: number;
  cpuMs: number;
  /** A buffered answer's body (a streamed one's bytes are counted, not kept). */
  body?: string;
  /** From spawn to exit, measured here: node's start, the import, the first invocation. */
  wallMs: number;
}

/**
 * Runs one invocation of `bundle` in a fresh node process with a Lambda-like environment (the
 * function's variables, dummy credentials; no tsx, no test settings), its V8 heap capped with
 * `heapFlags` when given (the function's own, as deployed), else within `memoryMb` (old space
 * 90%, semi-space 5%), and returns what it measured.
 */
export function freshInvocation(
  bundle: string,
  event: unknown,
  env: Record<string, string>,
  memoryMb = 512,
  heapFlags?: readonly string[],
): Promise<FreshRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // The heap capped, so a run that needs more fails here as it would there.
    const heap = heapFlags ?? [
      `--max-old-space-size=${Math.floor(memoryMb * 0.9)}`,
      `--max-semi-space-size=${Math.max(1, Math.floor(memoryMb * 0.05))}`,
    ];
    const child = spawn(process.execPath, [...heap, join(ROOT, 'bench', 'lambda-runner.mjs'), bundle], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        AWS_LAMBDA_FUNCTION_NAME: 'bench',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
        AWS_ACCESS_KEY_ID: 'bench',
        AWS_SECRET_ACCESS_KEY: 'bench',
        BENCH_EVENT: JSON.stringify(event),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      const line = out.split('\n').find((l) => l.startsWith('BENCH '));
      if (code !== 0 || !line) return reject(new Error(`fresh invocation of ${bundle} failed (${code}):\n${err.slice(-2000)}`));
      resolve({ ...(JSON.parse(line.slice(6)) as Omit<FreshRun, 'wallMs'>), wallMs });
    });
  });
}
