import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ROOT } from '../../infra/build.js';
import { LAMBDA_NODE_MAJOR, LAMBDA_RUNTIME_ID } from '../../infra/node-version.js';
import { runtimeClientModule } from './bundles.js';

/**
 * The runtime an instance runs the function's bundle under: ours (the default,
 * local/lambda/runtime-client.ts) or AWS's own runtime interface client (`aws-lambda-ric`,
 * the code of Lambda's managed Node runtime) when it is installed and named (docs/decisions.md
 * says why it is optional), both on Lambda's Node major where it can be had (lambdaNode). Both
 * speak the same Lambda Runtime API.
 */
export interface LambdaRuntime {
  name: 'local' | 'aws-lambda-ric';
  /** The Node binary instances run on. */
  node: LambdaNode;
  /** How an instance is started: the program and its arguments (the runtime's module, and for AWS's the handler). */
  command(handler: string): { file: string; args: string[] };
  /** Where the runtime lives (LAMBDA_RUNTIME_DIR). */
  dir: string;
  /** The CPUs every instance is confined to (LAMBDA_RUNTIME_CPUS), when asked. */
  cpus: string | undefined;
  /** One sentence: which Node and runtime the functions run on. */
  description: string;
  /** Whether that Node is Lambda's major (else the stack says which it is, once). */
  onLambdaMajor: boolean;
}

/** A Node binary for the sandboxes, its version and where it came from. */
export interface LambdaNode {
  path: string;
  /** `24.21.0`. */
  version: string;
  /** LAMBDA_RUNTIME_NODE, the registry's package of Lambda's Node major, or the Node running the stack. */
  source: 'variable' | 'package' | 'machine';
}

/** The variables that choose the runtime (README, Configuration). */
export const RUNTIME_VARIABLES = Object.freeze({
  runtime: 'LAMBDA_RUNTIME',
  ric: 'LAMBDA_RUNTIME_RIC',
  node: 'LAMBDA_RUNTIME_NODE',
  cpus: 'LAMBDA_RUNTIME_CPUS',
});

/**
 * The registry's package that ships a Node binary for this platform (no install script: the binary
 * is in the package). package.json has Linux x64's as an optional dependency, pinned to Lambda's
 * major: npm installs it where it fits and skips it elsewhere.
 */
export const LAMBDA_NODE_PACKAGE = `node-${process.platform}-${process.arch}`;

/** The oldest Node `aws-lambda-ric` runs on (its `engines`). */
const RIC_NODE_MAJOR = 22;

/** A runtime choice that cannot be used, in one sentence. */
export class RuntimeChoiceError extends Error {
  override name = 'RuntimeChoiceError';
}

const major = (version: string): number => Number.parseInt(version, 10);

/** The Node binary of LAMBDA_NODE_PACKAGE and its version, when it is installed with Lambda's major; else undefined. */
export function packagedLambdaNode(root = ROOT, packageName = LAMBDA_NODE_PACKAGE): LambdaNode | undefined {
  let manifest: string;
  try {
    manifest = createRequire(join(root, 'package.json')).resolve(`${packageName}/package.json`);
  } catch {
    return undefined;
  }
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const path = join(dirname(manifest), 'bin', 'node');
  if (!existsSync(path) || major(version) !== LAMBDA_NODE_MAJOR) return undefined;
  return { path, version, source: 'package' };
}

/**
 * The Node the sandboxes run: LAMBDA_RUNTIME_NODE when set (checked by running it), else the
 * registry's package of Lambda's Node major when it installed here, else this process's Node.
 * @throws RuntimeChoiceError when LAMBDA_RUNTIME_NODE names no Node that runs
 */
export function lambdaNode(env: NodeJS.ProcessEnv, packaged: () => LambdaNode | undefined = packagedLambdaNode): LambdaNode {
  const named = env[RUNTIME_VARIABLES.node]?.trim();
  if (named) {
    const run = existsSync(named) ? spawnSync(named, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 10_000 }) : undefined;
    const version = run?.status === 0 ? run.stdout.trim() : '';
    if (!/^\d+\.\d+\.\d+/.test(version)) {
      throw new RuntimeChoiceError(
        `${RUNTIME_VARIABLES.node} must be the path of a Node binary, not ${JSON.stringify(named.slice(0, 200))}.`,
      );
    }
    return { path: named, version, source: 'variable' };
  }
  return packaged() ?? { path: process.execPath, version: process.versions.node, source: 'machine' };
}

/** The one sentence the stack says about the Node its sandboxes run. */
export function describeLambdaNode(node: LambdaNode, runtime: LambdaRuntime['name'] = 'local'): string {
  const client = runtime === 'local' ? 'the local runtime client' : "AWS's aws-lambda-ric";
  if (major(node.version) === LAMBDA_NODE_MAJOR) {
    const from =
      node.source === 'package'
        ? `the ${LAMBDA_NODE_PACKAGE} package`
        : node.source === 'variable'
          ? RUNTIME_VARIABLES.node
          : 'this machine';
    return `functions run on Node ${node.version} (${from}), the major of Lambda's ${LAMBDA_RUNTIME_ID}, under ${client}.`;
  }
  const which = node.source === 'machine' ? "this machine's Node" : `Node from ${RUNTIME_VARIABLES.node},`;
  const hint =
    node.source === 'machine'
      ? ` (the optional ${LAMBDA_NODE_PACKAGE} package of Node ${LAMBDA_NODE_MAJOR} is not installed here; ${RUNTIME_VARIABLES.node} can name a Node ${LAMBDA_NODE_MAJOR} binary)`
      : '';
  return `functions run on ${which} ${node.version}, not Lambda's Node ${LAMBDA_NODE_MAJOR} (${LAMBDA_RUNTIME_ID}), under ${client}${hint}.`;
}

/** LAMBDA_RUNTIME_CPUS as taskset reads a CPU list (`1`, `0,2`, `2-3`), or undefined when unset. */
function pinnedCpus(env: NodeJS.ProcessEnv): string | undefined {
  const cpus = env[RUNTIME_VARIABLES.cpus]?.trim();
  if (!cpus) return undefined;
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(cpus)) {
    throw new RuntimeChoiceError(
      `${RUNTIME_VARIABLES.cpus} must be a list of CPUs such as 1 or 0,2-3, not ${JSON.stringify(cpus.slice(0, 40))}.`,
    );
  }
  if (!hasTaskset()) {
    throw new RuntimeChoiceError(`${RUNTIME_VARIABLES.cpus} needs taskset (util-linux), which is not on this machine's PATH.`);
  }
  return cpus;
}

/** Whether taskset (util-linux) is on this machine's PATH. */
export function hasTaskset(): boolean {
  return spawnSync('taskset', ['-V']).status === 0;
}

/** `file args…`, confined to `cpus` by taskset when given, else as it is. */
export function onCpus(cpus: string | undefined, file: string, args: string[]): { file: string; args: string[] } {
  return cpus ? { file: 'taskset', args: ['-c', cpus, file, ...args] } : { file, args };
}

/**
 * The runtime `env` asks for: LAMBDA_RUNTIME unset or `local` for ours; `aws-lambda-ric` for AWS's,
 * with LAMBDA_RUNTIME_RIC the path of its `index.mjs`; either on lambdaNode's Node, confined to
 * LAMBDA_RUNTIME_CPUS when set (the bench gives the functions a core of their own so).
 * @throws RuntimeChoiceError naming what is missing
 */
export async function lambdaRuntime(env: NodeJS.ProcessEnv, packaged?: () => LambdaNode | undefined): Promise<LambdaRuntime> {
  const choice = env[RUNTIME_VARIABLES.runtime]?.trim() || 'local';
  if (choice !== 'local' && choice !== 'aws-lambda-ric') {
    throw new RuntimeChoiceError(
      `${RUNTIME_VARIABLES.runtime} must be local or aws-lambda-ric, not ${JSON.stringify(choice.slice(0, 40))}.`,
    );
  }
  const node = lambdaNode(env, packaged);
  const cpus = pinnedCpus(env);
  const description = describeLambdaNode(node, choice);
  const onLambdaMajor = major(node.version) === LAMBDA_NODE_MAJOR;
  if (choice === 'local') {
    const client = await runtimeClientModule();
    return {
      name: 'local',
      node,
      command: () => onCpus(cpus, node.path, [client]),
      dir: dirname(client),
      cpus,
      description,
      onLambdaMajor,
    };
  }
  const ric = env[RUNTIME_VARIABLES.ric]?.trim();
  if (!ric || !existsSync(ric)) {
    throw new RuntimeChoiceError(
      `${RUNTIME_VARIABLES.runtime}=aws-lambda-ric needs ${RUNTIME_VARIABLES.ric}, the path of aws-lambda-ric's index.mjs (npm install aws-lambda-ric, its install scripts allowed).`,
    );
  }
  if (major(node.version) < RIC_NODE_MAJOR) {
    throw new RuntimeChoiceError(
      `${RUNTIME_VARIABLES.runtime}=aws-lambda-ric needs Node ${RIC_NODE_MAJOR} or later, not ${node.version}: install the ${LAMBDA_NODE_PACKAGE} package or name a Node ${LAMBDA_NODE_MAJOR} binary in ${RUNTIME_VARIABLES.node}.`,
    );
  }
  return {
    name: 'aws-lambda-ric',
    node,
    command: (handler) => onCpus(cpus, node.path, [ric, handler]),
    dir: dirname(ric),
    cpus,
    description,
    onLambdaMajor,
  };
}
