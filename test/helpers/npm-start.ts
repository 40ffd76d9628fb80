import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { emptyLocalDir, localDirWithKey } from './local-dir.js';

export { freePort } from './faults.js';

/**
 * `npm start` and the project's CLIs as a user runs them: each its own process, from the project's
 * root. With `viaNpm`, each is started through npm itself; otherwise each runs as one `node` on
 * its entry point bundled once for the run (test/helpers/local-build-setup.ts), which loads in a
 * third to a half of the time `node --import tsx FILE` (npm's command) takes.
 */

const execFileAsync = promisify(execFile);

/** The compiled entry point of local/`script` (`start.ts`, `token-cli.ts`…). */
const compiled = (script: string): string => join(inject('localBuildDir'), script.replace(/\.ts$/, '.mjs'));

/** A started `npm start`: its process, everything it printed so far, and its exit code once it exits and all it printed is read. */
export interface NpmStart {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];

/** Whether the process has ended, by exiting or by a signal (its output may still be in the pipes: see NpmStart.exited). */
export const hasEnded = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

/** Kills every `npm start` this file started that still runs (for afterAll). */
export function killStarted(): void {
  for (const child of started) if (!hasEnded(child)) child.kill('SIGKILL');
}

/**
 * Runs the start script (`npm run -s start` with `viaNpm`, else its compiled entry point), with handler
 * logs silent; a variable given as undefined is unset.
 */
export function npmStart(env: Record<string, string | undefined>, viaNpm = false): NpmStart {
  const options = {
    cwd: ROOT,
    // The run's function bundles (test/helpers/local-build-setup.ts), rather than a build of its own in dist/.
    env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT', LAMBDA_BUNDLES: inject('functionBundlesDir'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
  };
  const child = viaNpm ? spawn('npm', ['run', '-s', 'start'], options) : spawn(process.execPath, [compiled('start.ts')], options);
  started.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  // 'close', not 'exit': the process may exit before its last words are read from the pipes.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/**
 * Waits until `npm start` has printed `text`; fails at once when it exits first. Generous by default:
 * on a loaded 2-core machine several stacks starting at once take long.
 */
export async function waitFor(run: NpmStart, text: string | RegExp, ms = 110_000): Promise<void> {
  const deadline = Date.now() + ms;
  const printed = (): boolean => (typeof text === 'string' ? run.output().includes(text) : text.test(run.output()));
  const fail = (): Error => new Error(`npm start did not print ${String(text)}:\n${run.output()}`);
  while (!printed()) {
    if (hasEnded(run.child)) {
      await run.exited; // its last words may still be in the pipes
      if (printed()) return;
      throw fail();
    }
    if (Date.now() > deadline) throw fail();
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A started stack's addresses, as its banner prints them. */
export interface Banner {
  publicUrl: string;
  privateUrl: string;
  dynamo: string;
}

/** Starts `npm start` on free ports (or those `env` gives) and waits for its whole banner. */
export async function npmStartReady(env: Record<string, string | undefined>): Promise<NpmStart & Banner> {
  const run = npmStart({ PORT: '0', PRIVATE_PORT: '0', DYNAMODB_PORT: '0', ...env });
  await waitFor(run, 'Stop with Ctrl-C');
  const out = run.output();
  return {
    ...run,
    publicUrl: /public\s+(http:\/\/\S+?)\/api\/agents/.exec(out)![1]!,
    privateUrl: /private\s+(http:\/\/\S+?)\/api\/mcp\/endpoint/.exec(out)![1]!,
    dynamo: /dynamodb\s+(http:\/\/\S+)/.exec(out)![1]!,
  };
}

const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The npm script (package.json) that runs local/`script`. */
function npmScriptOf(script: string): string {
  const name = Object.keys(SCRIPTS).find((n) => SCRIPTS[n] === `tsx local/${script}`);
  if (!name) throw new Error(`no npm script runs local/${script}`);
  return name;
}

/**
 * `npm run <script>` for local/`script`: its stdout and stderr; rejects (with code, stdout,
 * stderr) on a non-zero exit. It runs the CLI's compiled entry point, or with `viaNpm` the npm
 * script itself (`npm run -s token -- …`, tsx and the packages as Node resolves them).
 */
export async function runCli(
  script: string,
  args: string[],
  env: Record<string, string>,
  viaNpm = false,
): Promise<{ stdout: string; stderr: string }> {
  const options = { cwd: ROOT, env: { ...process.env, ...env } };
  const { stdout, stderr } = viaNpm
    ? await execFileAsync('npm', ['run', '-s', npmScriptOf(script), '--', ...args], options)
    : await execFileAsync(process.execPath, [compiled(script), ...args], options);
  return { stdout, stderr };
}

/** `npm run token -- --tenant T [args]` for a stack started with `env` (the same issuer key folder and PORT). */
export async function tokenFor(tenant: string, env: Record<string, string>, args: string[] = []): Promise<string> {
  return (await runCli('token-cli.ts', ['--tenant', tenant, ...args], env)).stdout.trim();
}

/** Whether something accepts connections on `port` of the loopback address right now. */
export function portIsOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A start's own folder for the issuer key (LOCAL_DIR) and free ports chosen by the system. The key
 * is already in the folder, unless `issuerKey` is 'none': then whatever runs there first makes it.
 */
export const freshStartEnv = async (issuerKey: 'copied' | 'none' = 'copied'): Promise<Record<string, string>> => ({
  LOCAL_DIR: issuerKey === 'copied' ? await localDirWithKey('start-') : await emptyLocalDir('start-'),
  PRIVATE_PORT: '0',
  DYNAMODB_PORT: '0',
  PORT: '0',
});
