import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { runtimeClientModule } from './bundles.js';

/**
 * The runtime an instance runs the function's bundle under: ours (the default, this Node and
 * infra/local/lambda/runtime-client.ts), or AWS's own runtime interface client (`aws-lambda-ric`,
 * the code of Lambda's managed Node runtime) on a Node 22 binary, when both are installed and
 * named (docs/decisions.md says why it is optional). Both speak the same Lambda Runtime API.
 */
export interface LambdaRuntime {
  name: 'local' | 'aws-lambda-ric';
  /** The Node binary an instance is started with. */
  node: string;
  /** The arguments after it: the runtime's module, and for AWS's the handler (`index.handler`). */
  args(handler: string): string[];
  /** Where the runtime lives (LAMBDA_RUNTIME_DIR). */
  dir: string;
}

/** The variables that choose the runtime (README, Configuration). */
export const RUNTIME_VARIABLES = Object.freeze({
  runtime: 'LAMBDA_RUNTIME',
  ric: 'LAMBDA_RUNTIME_RIC',
  node: 'LAMBDA_RUNTIME_NODE',
});

/** A runtime choice that cannot be used, in one sentence. */
export class RuntimeChoiceError extends Error {
  override name = 'RuntimeChoiceError';
}

/**
 * The runtime `env` asks for: LAMBDA_RUNTIME unset or `local` for ours; `aws-lambda-ric` for AWS's,
 * with LAMBDA_RUNTIME_RIC the path of its `index.mjs` and LAMBDA_RUNTIME_NODE a Node 22 binary.
 * @throws RuntimeChoiceError naming what is missing
 */
export async function lambdaRuntime(env: NodeJS.ProcessEnv): Promise<LambdaRuntime> {
  const choice = env[RUNTIME_VARIABLES.runtime]?.trim() || 'local';
  if (choice === 'local') {
    const client = await runtimeClientModule();
    return { name: 'local', node: process.execPath, args: () => [client], dir: dirname(client) };
  }
  if (choice !== 'aws-lambda-ric') {
    throw new RuntimeChoiceError(
      `${RUNTIME_VARIABLES.runtime} must be local or aws-lambda-ric, not ${JSON.stringify(choice.slice(0, 40))}.`,
    );
  }
  const ric = env[RUNTIME_VARIABLES.ric]?.trim();
  const node = env[RUNTIME_VARIABLES.node]?.trim();
  if (!ric || !existsSync(ric)) {
    throw new RuntimeChoiceError(
      `${RUNTIME_VARIABLES.runtime}=aws-lambda-ric needs ${RUNTIME_VARIABLES.ric}, the path of aws-lambda-ric's index.mjs (npm install aws-lambda-ric, its install scripts allowed).`,
    );
  }
  if (!node || !existsSync(node)) {
    throw new RuntimeChoiceError(
      `${RUNTIME_VARIABLES.runtime}=aws-lambda-ric needs ${RUNTIME_VARIABLES.node}, the path of a Node 22 binary (aws-lambda-ric requires Node 22).`,
    );
  }
  return { name: 'aws-lambda-ric', node, args: (handler) => [ric, handler], dir: dirname(ric) };
}
