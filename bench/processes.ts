import { type ChildProcess, spawn } from 'node:child_process';
import { ROOT } from '../infra/build.js';
import { onCpus } from './cores.js';
import type { CpuFloorRun, cpuFloorRun } from './cpu-floor.js';
import type { FunctionCoreOperations } from './function-core.js';

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

interface ChildOptions {
  /** The Node binary (default: this process's). */
  node?: string;
  /** The CPUs it runs on (taskset), when pinned. */
  cpus?: string | undefined;
  /** Its environment (default: this process's, with `env` on top). */
  environment?: NodeJS.ProcessEnv;
  /** An IPC channel to it. */
  ipc?: boolean;
  timeoutMs?: number;
}

/**
 * A child held in the registry from its spawn until it ends (or is stopped), so that stopChildren()
 * stops it by its id when the bench fails or is interrupted while it runs.
 */
function registered(child: ChildProcess, output: () => string): Child {
  const handle: Child = {
    process: child,
    output,
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
  // An ended child has nothing left to stop (a failed spawn ends too, with a negative exit code).
  child.once('close', () => children.delete(handle));
  return handle;
}

/** Starts `node --import tsx script` and resolves once `ready` matches its output. */
async function startChild(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
  options: ChildOptions = {},
): Promise<Child & { match: RegExpExecArray }> {
  const { file, args } = onCpus(options.cpus, options.node ?? process.execPath, ['--import', 'tsx', script]);
  const child = spawn(file, args, {
    cwd: ROOT,
    env: { ...(options.environment ?? process.env), ...env },
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
  });
  // Its output, the last 64 KiB of it (enough to say why it did not start, or how it ended).
  let out = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (c: Buffer) => {
      out = (out + c.toString()).slice(-65_536);
    });
  }
  const handle = registered(child, () => out);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const match = ready.exec(out);
    if (match) return { ...handle, match };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${script} did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The embedded engine in its own process (DynamoDB is remote: its CPU is not the service's); on this process's core. */
export async function startEngine(): Promise<Child & { endpoint: string }> {
  const child = await startChild('bench/engine-child.ts', {}, /^(http:\/\/\S+)\n/m);
  return { ...child, endpoint: child.match[1] ?? '' };
}

type Operation = keyof FunctionCoreOperations;
/** The bench's process on the function's core (bench/function-core.ts): each call runs one operation there and resolves with what it measured. */
export interface FunctionCore {
  node: string;
  run<K extends Operation>(op: K, args: Parameters<FunctionCoreOperations[K]>[0]): Promise<Awaited<ReturnType<FunctionCoreOperations[K]>>>;
  stop(): Promise<void>;
}

/**
 * Starts bench/function-core.ts on `node` (the sandboxes' Node) and `cpus` (the function's core),
 * with exactly `environment` (a function's, as its instances have it): the floors' readers and
 * the in-process call run there.
 */
export async function startFunctionCore(options: {
  node: string;
  cpus: string | undefined;
  environment: NodeJS.ProcessEnv;
}): Promise<FunctionCore> {
  const child = await startChild('bench/function-core.ts', {}, /^function core ready on Node (\S+)\n/m, { ...options, ipc: true });
  const pending = new Map<number, { resolve: (value: never) => void; reject: (error: Error) => void }>();
  let next = 0;
  child.process.on('message', (message: { id: number; result?: unknown; error?: string }) => {
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiting?.reject(new Error(`on the function's core: ${message.error}`));
    else waiting?.resolve(message.result as never);
  });
  child.process.once('exit', (code, signal) => {
    for (const waiting of pending.values())
      waiting.reject(new Error(`the function core's process ended (${signal ?? code}):\n${child.output().slice(-2000)}`));
    pending.clear();
  });
  return {
    node: child.match[1] ?? '',
    run: (op, args) =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve: resolve as (value: never) => void, reject });
        child.process.send({ id, op, args });
      }),
    stop: () => child.stop(),
  };
}

/**
 * One run of the CPU floor (bench/cpu-floor.ts) in a process of its own, started fresh as a
 * function instance is: `node` (the sandboxes' Node) on `cpus` (the function's core), with the
 * inventory function's NODE_OPTIONS, its bundle `bundle` (bench/cpu-floor-main.ts). Resolves with
 * what it measured in itself.
 */
export function runCpuFloor(options: {
  node: string;
  cpus: string | undefined;
  bundle: string;
  nodeOptions: string;
  run: Parameters<typeof cpuFloorRun>[0];
}): Promise<CpuFloorRun> {
  const { file, args } = onCpus(options.cpus, options.node, [options.bundle]);
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: options.nodeOptions, CPU_FLOOR_RUN: JSON.stringify(options.run) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    // Registered as the other children are: a bench stopped mid-run stops the floor too, not only the engine and the function's core.
    registered(child, () => err);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err = (err + c.toString()).slice(-4_000);
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`the CPU floor ended with ${code}: ${err}`));
      else resolve(JSON.parse(out) as CpuFloorRun);
    });
  });
}
