import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OFFLINE_PACKAGING_ENV, ROOT } from '../../infra/build.js';

/** Templates are read as plain JSON; the assertions give them their shape. */
export type Json = Record<string, any>;

/** The environment of a machine with no AWS account configured at all. */
export function credentialFreeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...OFFLINE_PACKAGING_ENV };
  for (const key of Object.keys(env)) {
    if (/^AWS_/.test(key) && key !== 'AWS_REGION') delete env[key];
  }
  env.AWS_CONFIG_FILE = '/nonexistent/aws-config';
  env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/aws-credentials';
  return env;
}

/** `unshare -n` runs a command in a new network namespace with no interface up: no network at all. */
export const canCutNetwork = spawnSync('unshare', ['-n', 'true']).status === 0;

export interface PackagedTemplate {
  /** The `--package` folder osls wrote; remove it with `removePackage`. */
  outDir: string;
  template: Json;
  state: Json;
}

/** The safety net for a hung osls; packaging takes seconds. */
const PACKAGING_TIMEOUT_MS = 240_000;
const LOCK = join(ROOT, 'dist', '.packaging.lock');

/**
 * Runs `npm run package` as a user would (build, then osls package), offline (no network at all
 * where `unshare` allows) and without AWS credentials, into a fresh folder, and reads the template
 * and the service state osls wrote there. Runs of this in other test files wait for each other:
 * each one rebuilds dist/, and osls reads dist/private-api-deployment.json twice (its logical id
 * and its resource), so a build in between would mismatch the two.
 */
export async function packageTemplate(): Promise<PackagedTemplate> {
  const outDir = mkdtempSync(join(tmpdir(), 'osls-package-'));
  const release = await acquireLock();
  try {
    const command = ['npm', 'run', '--silent', 'package', '--', '--package', outDir];
    const [file, ...args] = canCutNetwork ? ['unshare', '-n', ...command] : command;
    const run = spawnSync(file!, args, { cwd: ROOT, encoding: 'utf8', env: credentialFreeEnv(), timeout: PACKAGING_TIMEOUT_MS });
    if (run.status !== 0) throw new Error(`npm run package failed (${run.status ?? run.signal}):\n${run.stdout}\n${run.stderr}`);
  } finally {
    release();
  }
  return {
    outDir,
    template: JSON.parse(readFileSync(join(outDir, 'cloudformation-template-update-stack.json'), 'utf8')) as Json,
    state: JSON.parse(readFileSync(join(outDir, 'serverless-state.json'), 'utf8')) as Json,
  };
}

export function removePackage(packaged: PackagedTemplate | undefined): void {
  if (packaged) rmSync(packaged.outDir, { recursive: true, force: true });
}

/**
 * A lock folder holding the owner's pid; mkdir is atomic. A lock whose owner died (a test run
 * killed mid-packaging) is taken over rather than waited on.
 */
async function acquireLock(): Promise<() => void> {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + PACKAGING_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (ownerIsGone()) rmSync(LOCK, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`${LOCK} is still held after ${PACKAGING_TIMEOUT_MS / 1000} s`);
    else await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function ownerIsGone(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    return false; // just created, pid not written yet
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
