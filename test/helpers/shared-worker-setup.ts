import { installAwsLambdaGlobal } from '../../local/lambda/awslambda.js';

/**
 * Runs before each file of a project whose files share one worker's modules (vitest `isolate:
 * false`): each file starts from the environment the worker started with. A file that needs the
 * service's modules in-process loads them afresh with its variables (test/helpers/env.ts), so no
 * fenced session or broker secret of an earlier file is left in them.
 */

const worker = globalThis as { __pristineEnv?: NodeJS.ProcessEnv };
worker.__pristineEnv ??= { ...process.env };
const pristine = worker.__pristineEnv;
// Vitest's own variables (VITEST_WORKER_ID…) are set for each file before this runs: kept as they are.
const ours = (name: string): boolean => !name.startsWith('VITEST');
for (const name of Object.keys(process.env)) if (ours(name) && !(name in pristine)) delete process.env[name];
for (const [name, value] of Object.entries(pristine)) if (ours(name)) process.env[name] = value;
// What Lambda's Node runtime installs before it loads a handler: the streaming handlers call it when their module loads.
installAwsLambdaGlobal();
