import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from '../../infra/build.js';
import { OFFLINE_PACKAGING_ENV } from '../../infra/build-cli.js';
import { readTemplateSource } from '../../local/template-sources.js';

/** Templates are read as plain JSON; the assertions give them their shape. */
// biome-ignore lint/suspicious/noExplicitAny: a CloudFormation template read as JSON; the tests drill into it and assert what they find.
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

/** Written into the package folder when packaging ends: its exit and output. */
const OUTCOME_FILE = '.packaging-outcome.json';

/** The example stage's own parameters (serverless.yml `params.example`), as `--param` options for a stage of another name. */
const exampleParameters = (): string[] =>
  Object.entries(readTemplateSource<{ params: { example: Record<string, string> } }>(join(ROOT, 'serverless.yml')).params.example).map(
    ([name, value]) => `--param=${name}=${value}`,
  );

/**
 * The longest stage name the template's function and role names leave room for: its longest such
 * name is `<service>-<stage>-observations` (the observations function, and its role), 64 at most.
 */
export const LONGEST_STAGE = 'a'.repeat(64 - 'endpoint-read-service--observations'.length);

/**
 * The other stages the template tests package, each into a folder of its own: osls keeps state in
 * the service's `.serverless/` folder while it packages, so they run one after the other, after
 * the main packaging, never beside it.
 */
export const VARIANTS = Object.freeze({
  /** The example stage with AWS WAF turned off. */
  noWaf: ['--stage', 'example', '--param=waf=false'],
  /** A rate AWS WAF refuses. */
  wafTooLow: ['--stage', 'example', '--param=wafIpRateLimit=5'],
  /** The example stage with both tables under a customer managed key, and alarms sent to an HTTPS endpoint. */
  customerKey: [
    '--stage',
    'example',
    '--param=tableKmsKeyArn=arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    '--param=alarmHttpsEndpoint=https://pager.example.com/sns',
  ],
  /** A stage with none of the parameters that have no default. */
  noParameters: ['--stage', 'prod'],
  /** The example stage's parameters under the longest stage name that fits, and under one a character longer. */
  longestStage: ['--stage', LONGEST_STAGE, ...exampleParameters()],
  tooLongStage: ['--stage', `${LONGEST_STAGE}b`, ...exampleParameters()],
  /** The example stage with two MCP instances kept initialised. */
  mcpProvisioned: ['--stage', 'example', '--param=mcpProvisionedConcurrency=2'],
});
export type Variant = keyof typeof VARIANTS;

/** Runs a command offline (no network at all where `unshare` allows) and without AWS credentials; writes its outcome into `outDir`. */
function runOffline(command: string[], outDir: string): Promise<void> {
  const [file, ...args] = canCutNetwork ? ['unshare', '-n', ...command] : command;
  return new Promise<void>((resolve) => {
    execFile(
      file as string,
      args,
      { cwd: ROOT, encoding: 'utf8', env: credentialFreeEnv(), timeout: PACKAGING_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : (error.signal ?? String(error.code))) : 0;
        writeFileSync(join(outDir, OUTCOME_FILE), JSON.stringify({ status, stdout, stderr }));
        resolve();
      },
    );
  });
}

/**
 * Starts `npm run package` as a user would run it (build, then osls package), offline and without
 * AWS credentials, into a fresh folder, then osls package of each VARIANT into a folder of its own
 * under it, and returns that folder at once; each outcome is written into its folder when it ends
 * (see packagedTemplate and packagedVariant). Started once per test run by the template project's
 * global setup (test/helpers/template-setup.ts), so the other files run while it packages: nothing
 * else builds into dist/ during a run, so osls reads one consistent build, and the build tests
 * (test/infra/build.test.ts) read the bundles and zips it left there once it has ended.
 */
export function startPackaging(): { outDir: string; ended: Promise<void> } {
  const outDir = mkdtempSync(join(tmpdir(), 'osls-package-'));
  const require = createRequire(import.meta.url);
  const osls = join(dirname(require.resolve('osls/package.json')), 'bin', 'serverless.js');
  const ended = (async () => {
    await runOffline(['npm', 'run', '--silent', 'package', '--', '--package', outDir], outDir);
    for (const [name, args] of Object.entries(VARIANTS)) {
      const dir = join(outDir, `variant-${name}`);
      mkdirSync(dir);
      await runOffline([process.execPath, osls, 'package', ...args, '--package', dir], dir);
    }
  })();
  return { outDir, ended };
}

/** Waits for the outcome written into `dir` (runOffline). */
async function outcomeOf(dir: string): Promise<{ status: number | string; stdout: string; stderr: string }> {
  const outcomeFile = join(dir, OUTCOME_FILE);
  const deadline = Date.now() + 2 * PACKAGING_TIMEOUT_MS;
  while (!existsSync(outcomeFile)) {
    if (Date.now() > deadline) throw new Error(`packaging wrote no outcome into ${dir}`);
    await sleep(100);
  }
  return JSON.parse(readFileSync(outcomeFile, 'utf8')) as { status: number | string; stdout: string; stderr: string };
}

/** A variant's packaging (startPackaging), once it has ended: its exit, its output and the template it wrote. */
export async function packagedVariant(
  outDir: string,
  variant: Variant,
): Promise<{ status: number | string; output: string; template: Json | undefined }> {
  const dir = join(outDir, `variant-${variant}`);
  const outcome = await outcomeOf(dir);
  const file = join(dir, 'cloudformation-template-update-stack.json');
  return {
    status: outcome.status,
    output: `${outcome.stdout}${outcome.stderr}`,
    template: outcome.status === 0 && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Json) : undefined,
  };
}

/**
 * The template and the service state osls wrote into `outDir` (from startPackaging), once its
 * packaging has ended; throws with osls's output when it failed.
 */
export async function packagedTemplate(outDir: string): Promise<PackagedTemplate> {
  const outcome = await outcomeOf(outDir);
  if (outcome.status !== 0) throw new Error(`npm run package failed (${outcome.status}):\n${outcome.stdout}\n${outcome.stderr}`);
  return {
    outDir,
    template: JSON.parse(readFileSync(join(outDir, 'cloudformation-template-update-stack.json'), 'utf8')) as Json,
    state: JSON.parse(readFileSync(join(outDir, 'serverless-state.json'), 'utf8')) as Json,
  };
}

export function removePackage(outDir: string): void {
  rmSync(outDir, { recursive: true, force: true });
}

/**
 * The logical ids of the resources the CloudFormation fragments under infra/ declare (serverless.yml
 * includes them): a packaged template must hold every one. Read from the YAML's own layout (a
 * `Resources:` key, ids two spaces in), which every fragment follows.
 */
export function fragmentResourceIds(): string[] {
  const ids: string[] = [];
  for (const file of readdirSync(join(ROOT, 'infra'))
    .filter((f) => f.endsWith('.yml'))
    .sort()) {
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

/** The resources of infra/public-api.yml that a stage loses when it turns AWS WAF off (waf=false). */
export const WAF_RESOURCE_IDS = ['PublicApiWafLogGroup', 'PublicApiWebAcl', 'PublicApiWebAclAssociation', 'PublicApiWebAclLogging'];
