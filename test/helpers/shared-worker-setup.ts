import { installAwsLambdaGlobal } from '../../infra/local/lambda/awslambda.js';
import { resetConfig } from '../../lib/config.js';
import { setSecretsClient } from '../../lib/mcp/broker-secret.js';
import { setDynamo } from '../../lib/store/client.js';
import { resetTenantClients } from '../../lib/store/tenant-client.js';

/**
 * Runs before each file of a project whose files share one worker's modules (vitest `isolate:
 * false`): each file starts from the environment the worker started with, and from no cached
 * configuration, DynamoDB client, fenced session or broker secret that an earlier file left.
 */

const pristine = ((globalThis as { __pristineEnv?: NodeJS.ProcessEnv }).__pristineEnv ??= { ...process.env });
// Vitest's own variables (VITEST_WORKER_ID…) are set for each file before this runs: kept as they are.
const ours = (name: string): boolean => !name.startsWith('VITEST');
for (const name of Object.keys(process.env)) if (ours(name) && !(name in pristine)) delete process.env[name];
for (const [name, value] of Object.entries(pristine)) if (ours(name)) process.env[name] = value;
resetConfig();
setDynamo(undefined);
// What Lambda's Node runtime installs before it loads a handler: the streaming handlers call it when their module loads.
installAwsLambdaGlobal();
resetTenantClients();
setSecretsClient(undefined);
