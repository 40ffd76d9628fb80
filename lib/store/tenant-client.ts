import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { ForbiddenError, ServiceUnavailableError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { createDocumentClient, dynamo } from './client.js';
import { SESSION_POLICY_MAX_CHARS, tenantSessionName, tenantSessionPolicy, tenantTagValue } from './tenant-fence.js';

/**
 * The DynamoDB client that reads one tenant's data. With `TENANT_FENCING=off` (the local stack)
 * it is the service's one client. With `iam` (on AWS) it is a client of its own for the tenant,
 * signing with the credentials of a session of the tenant-read role that the session policy of
 * lib/store/tenant-fence.ts fences to the tenant's partitions.
 *
 * Cost: one `sts:AssumeRole` per tenant per credential lifetime (an hour, the most a chained role
 * allows) per warm function instance; the session and its client are kept until five minutes
 * before the credentials expire, for at most MAX_TENANTS tenants (the least recently used leaves).
 */

const LIFETIME_SECONDS = 3_600;
const RENEW_BEFORE_MS = 5 * 60_000;
const MAX_TENANTS = 256;

interface Fenced {
  client: DynamoDBDocumentClient;
  renewAt: number;
}

const sessions = new Map<string, Fenced>();
const pending = new Map<string, Promise<Fenced>>();
let sts: STSClient | undefined;

/** Forgets every fenced session (tests, and a configuration reset). */
export function resetTenantClients(): void {
  for (const { client } of sessions.values()) client.destroy();
  sessions.clear();
  pending.clear();
  sts = undefined;
}

function stsClient(): STSClient {
  const cfg = config();
  sts ??= new STSClient({
    region: cfg.region,
    maxAttempts: 2,
    ...(cfg.stsEndpoint ? { endpoint: cfg.stsEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
  return sts;
}

async function assumeTenantRole(tenantId: string, signal: AbortSignal | undefined): Promise<Fenced> {
  const cfg = config();
  const policy = JSON.stringify(tenantSessionPolicy(tenantId));
  if (policy.length > SESSION_POLICY_MAX_CHARS) {
    throw new ForbiddenError('The tenant named by the token cannot be served: its id is too long.');
  }
  let answer;
  try {
    answer = await stsClient().send(
      new AssumeRoleCommand({
        RoleArn: cfg.tenantReadRoleArn,
        RoleSessionName: tenantSessionName(tenantId),
        Policy: policy,
        DurationSeconds: LIFETIME_SECONDS,
        Tags: [{ Key: 'tenant', Value: tenantTagValue(tenantId) }],
      }),
      signal ? { abortSignal: signal } : {},
    );
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'AbortError' || e.name === 'TimeoutError') throw error;
    if (e.name === 'Throttling' || e.name === 'RegionDisabledException' || (e.$metadata?.httpStatusCode ?? 0) >= 500) {
      throw new ServiceUnavailableError('The tenant credentials are unavailable right now; try again later.', error);
    }
    // AccessDenied and the like: the function may not assume the role as configured.
    logger.error('tenant credentials refused', { error: e.name });
    throw error;
  }
  const c = answer.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) throw new Error('STS answered AssumeRole without credentials');
  return {
    client: createDocumentClient({
      region: cfg.region,
      endpoint: cfg.dynamoEndpoint,
      maxAttempts: cfg.dynamoMaxAttempts,
      timeoutMs: cfg.dynamoTimeoutMs,
      credentials: { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration },
    }),
    renewAt: c.Expiration.getTime() - RENEW_BEFORE_MS,
  };
}

/**
 * The client to read `tenantId`'s data with: fenced to it when fencing is on. `signal` bounds the
 * STS call as it bounds the reads.
 */
export async function tenantDynamo(tenantId: string, signal?: AbortSignal, now = Date.now()): Promise<DynamoDBDocumentClient> {
  if (config().tenantFencing !== 'iam') return dynamo();
  const kept = sessions.get(tenantId);
  if (kept && kept.renewAt > now) {
    // Least recently used leaves first: a hit moves the tenant to the end.
    sessions.delete(tenantId);
    sessions.set(tenantId, kept);
    return kept.client;
  }
  let fencing = pending.get(tenantId);
  if (!fencing) {
    fencing = assumeTenantRole(tenantId, signal).finally(() => pending.delete(tenantId));
    pending.set(tenantId, fencing);
  }
  const fenced = await fencing;
  const previous = sessions.get(tenantId);
  if (previous && previous !== fenced) retire(previous);
  sessions.delete(tenantId);
  sessions.set(tenantId, fenced);
  while (sessions.size > MAX_TENANTS) {
    const [oldest, session] = sessions.entries().next().value as [string, Fenced];
    retire(session);
    sessions.delete(oldest);
  }
  return fenced.client;
}

/** Closes a replaced client's connections once reads still using it have had time to finish. */
function retire(session: Fenced): void {
  setTimeout(() => session.client.destroy(), 60_000).unref();
}
