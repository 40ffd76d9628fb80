import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

/**
 * Runs `npm run package` as a user would (build, then osls package), offline (no network at all
 * where `unshare` allows) and without AWS credentials, into a fresh folder, and reads the template
 * and the service state osls wrote there. Run once per test run, by the template project's global
 * setup (test/helpers/template-setup.ts), which hands the result to the template test files: nothing
 * else builds into dist/ during a run, so osls reads one consistent build.
 */
export async function packageTemplate(): Promise<PackagedTemplate> {
  const outDir = mkdtempSync(join(tmpdir(), 'osls-package-'));
  const command = ['npm', 'run', '--silent', 'package', '--', '--package', outDir];
  const [file, ...args] = canCutNetwork ? ['unshare', '-n', ...command] : command;
  const run = spawnSync(file!, args, { cwd: ROOT, encoding: 'utf8', env: credentialFreeEnv(), timeout: PACKAGING_TIMEOUT_MS });
  if (run.status !== 0) throw new Error(`npm run package failed (${run.status ?? run.signal}):\n${run.stdout}\n${run.stderr}`);
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
 * The logical ids of the resources the CloudFormation fragments under infra/ declare (serverless.yml
 * includes them): a packaged template must hold every one. Read from the YAML's own layout (a
 * `Resources:` key, ids two spaces in), which every fragment follows.
 */
export function fragmentResourceIds(): string[] {
  const ids: string[] = [];
  for (const file of readdirSync(join(ROOT, 'infra')).filter((f) => f.endsWith('.yml')).sort()) {
    const lines = readFileSync(join(ROOT, 'infra', file), 'utf8').split('\n');
    let inResources = false;
    for (const line of lines) {
      if (/^\S/.test(line)) inResources = line.startsWith('Resources:');
      else if (inResources) {
        const id = /^ {2}([A-Za-z0-9]+):\s*$/.exec(line)?.[1];
        if (id) ids.push(id);
      }
    }
  }
  return ids;
}
