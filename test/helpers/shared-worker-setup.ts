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
for (const name of Object.keys(process.env)) if (!(name in pristine)) delete process.env[name];
Object.assign(process.env, pristine);
resetConfig();
setDynamo(undefined);
resetTenantClients();
setSecretsClient(undefined);
