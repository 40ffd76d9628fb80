import { type ChildProcess, spawn } from 'node:child_process';
import { ROOT } from '../infra/build.js';

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
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (c: Buffer) => {
      out += c.toString();
    });
  }
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
  return { ...child, endpoint: child.match[1] ?? '' };
}
