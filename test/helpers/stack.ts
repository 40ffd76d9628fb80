import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Fleet } from '../../infra/local/fleet.js';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { brokerTokenFor } from '../../infra/local/token-exchange.js';
import { config } from '../../lib/config.js';
import { expectResponseMatchesContract } from './contract.js';
import { uniqueTables } from './engine.js';
import { localDirWithKey } from './local-dir.js';

export interface TokenOptions {
  tenant?: string | undefined;
  subject?: string;
  expiresInSeconds?: number;
  /** `iat` in epoch seconds, when not now. */
  issuedAt?: number;
  audience?: string | string[] | undefined;
  extra?: Record<string, unknown>;
}

export interface TestStack extends LocalStack {
  /** A token signed by the stack's issuer, for the inventory audience unless told otherwise. */
  token(options?: TokenOptions): Promise<string>;
  /** A token for the MCP resource (MCP_AUDIENCE), as an MCP client sends it to POST /api/mcp. */
  mcpToken(options?: Omit<TokenOptions, 'audience'>): Promise<string>;
  /**
   * The token the local broker obtains by token exchange for this user: the observations audience
   * and the broker (`client`, default BROKER_CLIENT_ID) as actor, and the user's endpoint scope claim
   * when `groups` is given (copied as the exchange copies it); what the private listener expects.
   */
  brokerToken(options?: Omit<TokenOptions, 'audience' | 'extra'> & { client?: string; groups?: unknown }): Promise<string>;
}

/**
 * The local stack of `npm start`, on free ports, seeded from `fleet` through a fleet file (SEED=FILE),
 * with its issuer key in a temporary folder. It uses TEST_DYNAMODB_ENDPOINT when set (DynamoDB Local)
 * and the embedded dynalite engine otherwise.
 */
export async function startTestStack(fleet: Fleet | 'none', env: Record<string, string> = {}): Promise<TestStack> {
  const localDir = await localDirWithKey('endpoint-stack-');
  const dir = dirname(localDir);
  const tables = uniqueTables();
  Object.assign(process.env, { DATA_TABLE: tables.dataTable, AUDIT_TABLE: tables.auditTable, ...env });
  let seed = 'none';
  if (fleet !== 'none') {
    seed = join(dir, 'fleet.json');
    await writeFile(seed, JSON.stringify(fleet));
  }
  const stack = await startOnFreePorts({ seed, localDir });
  if (!stack.ready) throw new Error('the test stack could not create or seed its tables');
  return withTokens(stack);
}

/**
 * A stack with TestStack's token helpers, signed by its issuer for the configuration in force
 * (the stack's own once it started), the tenant `acme` and the subject `user-1` unless told otherwise.
 */
export function withTokens(stack: LocalStack): TestStack {
  const token = (options: TokenOptions = {}): Promise<string> => {
    const cfg = config();
    return stack.issuer.sign({
      issuer: cfg.jwtIssuer,
      // `audience: undefined` leaves `aud` out of the token (a token that names its client_id instead).
      audience: 'audience' in options ? options.audience : cfg.jwtAudience,
      tenant: 'tenant' in options ? options.tenant : 'acme',
      tenantClaim: cfg.tenantClaim,
      subject: options.subject ?? 'user-1',
      ...(options.expiresInSeconds !== undefined ? { expiresInSeconds: options.expiresInSeconds } : {}),
      ...(options.issuedAt !== undefined ? { issuedAt: options.issuedAt } : {}),
      ...(options.extra ? { extra: options.extra } : {}),
    });
  };
  return {
    ...stack,
    token,
    mcpToken: (options = {}) => token({ ...options, audience: config().mcpAudience }),
    brokerToken(options = {}) {
      const cfg = config();
      return brokerTokenFor(
        stack.issuer,
        {
          issuer: cfg.jwtIssuer,
          tenantClaim: cfg.tenantClaim,
          clientId: options.client ?? cfg.brokerClientId,
          audience: cfg.observationsAudience,
          ...(options.expiresInSeconds !== undefined ? { lifetimeSeconds: options.expiresInSeconds } : {}),
        },
        { subject: options.subject ?? 'user-1', tenant: 'tenant' in options ? options.tenant : 'acme', groups: options.groups },
      );
    },
  };
}

/** Operations of openapi.json by path; `/api/mcp` is the MCP door, checked by the SDK client instead. */
const OPERATIONS: Record<string, string> = {
  '/api/agents': 'listEndpointInventory',
  '/api/mcp/endpoint': 'getEndpointObservations',
};

/**
 * A fetch that returns what a user would see (status, headers, body text) after checking the
 * response against openapi.json: every e2e response of either operation, success or failure.
 */
export async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: string }> {
  const response = await fetch(url, { headers });
  const result = { status: response.status, headers: response.headers, body: await response.text() };
  const operationId = OPERATIONS[new URL(url).pathname];
  if (operationId) expectResponseMatchesContract(operationId, result);
  return result;
}

/**
 * `npm start`'s stack with time shrunk, for tests of what stays true while it runs: a grace and a
 * TTL of 3 s and a pulse every half second stand for 120 s, 600 s and a minute (six beats within a
 * grace leave room for a slow machine's writes). Sets its tables and times in process.env; `stop`
 * puts the environment back.
 */
export async function startShrunkTimeStack(seed: string, options: { seedLive?: boolean } = {}): Promise<TestStack> {
  const saved = { ...process.env };
  Object.assign(process.env, uniqueTables(), { ONLINE_GRACE_SECONDS: '3', OBSERVATION_TTL_SECONDS: '3' });
  const stack = await startOnFreePorts({
    seed,
    ...(options.seedLive ? { seedLive: true } : {}),
    localDir: await localDirWithKey('shrunk-'),
    demoPulseMs: 500,
  });
  const stop = stack.stop.bind(stack);
  return withTokens(
    Object.assign(stack, {
      async stop() {
        await stop();
        process.env = saved;
      },
    }),
  );
}

/** startLocalStack on free ports, quiet, on TEST_DYNAMODB_ENDPOINT when set (DynamoDB Local), else its embedded engine. */
function startOnFreePorts(
  options: Omit<Parameters<typeof startLocalStack>[0], 'port' | 'privatePort' | 'dynamoPort' | 'dynamoEndpoint' | 'quiet'>,
): Promise<LocalStack> {
  return startLocalStack({
    port: 0,
    privatePort: 0,
    dynamoPort: 0,
    dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT,
    quiet: true,
    ...options,
  });
}
