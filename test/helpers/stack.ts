import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';
import type { Fleet } from '../../local/fleet.js';
import { type LocalStack, type StackOptions, startLocalStack } from '../../local/stack.js';
import { brokerTokenFor } from '../../local/token-exchange.js';
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
  /** The `scope` claim: the door's (REQUIRED_SCOPE; for brokerToken the observations operation's) unless given; undefined: none. */
  scope?: string | undefined;
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
 * The fixed time of every client ID metadata document failure at the test stacks' sign-in: a
 * third of `npm start`'s 3 s, so the files that provoke failures do not wait 3 s for each. What it
 * proves is the same (every failure after the same fixed time; a document fetched within it).
 */
export const DOCUMENT_FAILURE_MS = 1_000;

/** DATA_TABLE and AUDIT_TABLE naming tables of a stack's own. */
function tableVariables(): { DATA_TABLE: string; AUDIT_TABLE: string } {
  const { dataTable, auditTable } = uniqueTables();
  return { DATA_TABLE: dataTable, AUDIT_TABLE: auditTable };
}

/**
 * The local stack of `npm start`, on free ports, seeded from `fleet` through a fleet file (SEED=FILE),
 * with its issuer key in a temporary folder, configured by this process's environment with tables of
 * its own and `env` on top. It uses TEST_DYNAMODB_ENDPOINT when set (DynamoDB Local) and the
 * embedded dynalite engine otherwise.
 */
export async function startTestStack(
  fleet: Fleet | 'none',
  env: Record<string, string> = {},
  options: Pick<StackOptions, 'quiet' | 'say'> = {},
): Promise<TestStack> {
  const localDir = await localDirWithKey('endpoint-stack-');
  const dir = dirname(localDir);
  let seed = 'none';
  if (fleet !== 'none') {
    seed = join(dir, 'fleet.json');
    await writeFile(seed, JSON.stringify(fleet));
  }
  const stack = await startOnFreePorts({ seed, localDir, env: { ...process.env, ...tableVariables(), ...env }, ...options });
  if (!stack.ready) throw new Error('the test stack could not create or seed its tables');
  return withTokens(stack);
}

/**
 * A stack with TestStack's token helpers, signed by its issuer for its configuration, the tenant
 * `acme` and the subject `user-1` unless told otherwise.
 */
export function withTokens(stack: LocalStack): TestStack {
  const token = (options: TokenOptions = {}): Promise<string> => {
    const cfg = stack.config;
    return stack.issuer.sign({
      issuer: cfg.jwtIssuer,
      // `audience: undefined` leaves `aud` out of the token (a token that names its client_id instead).
      audience: 'audience' in options ? options.audience : cfg.jwtAudience,
      tenant: 'tenant' in options ? options.tenant : 'acme',
      tenantClaim: cfg.tenantClaim,
      subject: options.subject ?? 'user-1',
      scope: 'scope' in options ? options.scope : cfg.requiredScope,
      ...(options.expiresInSeconds !== undefined ? { expiresInSeconds: options.expiresInSeconds } : {}),
      ...(options.issuedAt !== undefined ? { issuedAt: options.issuedAt } : {}),
      ...(options.extra ? { extra: options.extra } : {}),
    });
  };
  // Onto the stack itself: its `config` stays the one in force after updateEnvironment.
  return Object.assign(stack, {
    token,
    mcpToken: (options: Omit<TokenOptions, 'audience'> = {}) => token({ ...options, audience: stack.config.mcpAudience }),
    brokerToken(options: Parameters<TestStack['brokerToken']>[0] = {}) {
      const cfg = stack.config;
      return brokerTokenFor(
        stack.issuer,
        {
          issuer: cfg.jwtIssuer,
          tenantClaim: cfg.tenantClaim,
          scopeClaim: cfg.scopeClaim,
          clientId: options.client ?? cfg.brokerClientId,
          audience: cfg.observationsAudience,
          scope: 'scope' in options ? options.scope : cfg.observationsScope,
          ...(options.expiresInSeconds !== undefined ? { lifetimeSeconds: options.expiresInSeconds } : {}),
        },
        { subject: options.subject ?? 'user-1', tenant: 'tenant' in options ? options.tenant : 'acme', groups: options.groups },
      );
    },
  });
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
 * grace leave room for a slow machine's writes). Its tables and times go to the stack and its
 * functions as `npm start`'s environment would give them.
 */
export async function startShrunkTimeStack(seed: string, options: { seedLive?: boolean } = {}): Promise<TestStack> {
  const stack = await startOnFreePorts({
    seed,
    ...(options.seedLive ? { seedLive: true } : {}),
    localDir: await localDirWithKey('shrunk-'),
    demoPulseMs: 500,
    env: { ...process.env, ...tableVariables(), ONLINE_GRACE_SECONDS: '3', OBSERVATION_TTL_SECONDS: '3' },
  });
  return withTokens(stack);
}

/**
 * startLocalStack on free ports, quiet, running the run's function bundles
 * (test/helpers/local-build-setup.ts), on TEST_DYNAMODB_ENDPOINT when set (DynamoDB Local), else
 * its embedded engine, with document failures answered after DOCUMENT_FAILURE_MS.
 */
export function startOnFreePorts(options: NonNullable<Parameters<typeof startLocalStack>[0]>): Promise<LocalStack> {
  return startLocalStack({
    port: 0,
    privatePort: 0,
    dynamoPort: 0,
    dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT,
    quiet: true,
    bundlesDir: inject('functionBundlesDir'),
    documentFailureMs: DOCUMENT_FAILURE_MS,
    ...options,
  });
}
