import { AssumeRoleCommand, type AssumeRoleCommandOutput, STSClient } from '@aws-sdk/client-sts';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LRUCache } from 'lru-cache';
import { type Config, config } from '../config.js';
import { httpError, retryLater } from '../errors.js';
import { logger } from '../observability/logger.js';
import { tracer } from '../observability/tracer.js';
import { createDocumentClient } from './client.js';
import { type FenceKind, tenantSessionRequest } from './tenant-fence.js';

/**
 * The DynamoDB clients that work on one tenant's items. With `TENANT_FENCING=off` (where no STS
 * can be asked) each is the service's one client. With `iam` (on AWS) each is a client of its own for the
 * tenant, signing with the credentials of a session of a tenant role, assumed with the tenant's
 * `tenant` session tag (which the role's own policy fences to) and session policy
 * (lib/store/tenant-fence.ts): the tenant-read role for data-table reads, the tenant-audit role
 * for audit puts.
 *
 * Cost: one `sts:AssumeRole` per tenant and fence per credential lifetime (an hour, the most a
 * chained role allows) per warm function instance; the session and its client are kept on
 * lru-cache until five minutes before the credentials expire, for at most MAX_TENANTS tenants per
 * fence (the least recently used leaves), and reads of a tenant whose session is being assumed
 * share that one AssumeRole (lru-cache's single-flight `fetch`, bounded by the first caller's signal).
 */

/**
 * The service's own client, made once when this module loads (Lambda's init) from the
 * configuration and reused across invocations. Timeouts and retries are bounded so a slow or
 * absent engine becomes a 504/503 well inside the Lambda timeout.
 */
const serviceClient = tracer.captureAWSv3Client(
  createDocumentClient({
    region: config().region,
    endpoint: config().dynamoEndpoint,
    maxAttempts: config().dynamoMaxAttempts,
    timeoutMs: config().dynamoTimeoutMs,
  }),
);

const LIFETIME_SECONDS = 3_600;
const RENEW_BEFORE_MS = 5 * 60_000;
const MAX_TENANTS = 256;

const ROLE_ARN: Readonly<Record<FenceKind, (cfg: Config) => string | undefined>> = Object.freeze({
  read: (cfg) => cfg.tenantReadRoleArn,
  audit: (cfg) => cfg.tenantAuditRoleArn,
});

interface Fenced {
  client: DynamoDBDocumentClient;
  renewAt: number;
}

/** A fence's sessions, by tenant; a session that leaves (replaced, expired, evicted) has its client closed. */
function sessionCache(kind: FenceKind): LRUCache<string, Fenced> {
  return new LRUCache<string, Fenced>({
    max: MAX_TENANTS,
    dispose: (session) => retire(session),
    fetchMethod: async (tenantId, _stale, { signal, options }) => {
      const fenced = await assumeTenantRole(kind, tenantId, signal);
      options.ttl = Math.max(1, fenced.renewAt - Date.now());
      return fenced;
    },
  });
}

const sessions: Readonly<Record<FenceKind, LRUCache<string, Fenced>>> = { read: sessionCache('read'), audit: sessionCache('audit') };
let sts: STSClient | undefined;

function stsClient(): STSClient {
  const cfg = config();
  // STS at another address (a VPC endpoint's name) comes as the SDK reads it, AWS_ENDPOINT_URL_STS,
  // signed with the function's own credentials, as Secrets Manager's does.
  sts ??= tracer.captureAWSv3Client(new STSClient({ region: cfg.region, maxAttempts: 2 }));
  return sts;
}

async function assumeTenantRole(kind: FenceKind, tenantId: string, signal: AbortSignal | undefined): Promise<Fenced> {
  const cfg = config();
  let answer: AssumeRoleCommandOutput;
  try {
    answer = await stsClient().send(
      new AssumeRoleCommand({ RoleArn: ROLE_ARN[kind](cfg), DurationSeconds: LIFETIME_SECONDS, ...tenantSessionRequest(tenantId, kind) }),
      signal ? { abortSignal: signal } : {},
    );
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'AbortError' || e.name === 'TimeoutError') throw error;
    if (e.name === 'Throttling' || e.name === 'RegionDisabledException' || (e.$metadata?.httpStatusCode ?? 0) >= 500) {
      throw retryLater(503, 'The tenant credentials are unavailable right now; try again later.', error);
    }
    // AccessDenied and the like: the function may not assume the role as configured.
    logger.error('tenant credentials refused', { error: e.name, fence: kind });
    throw error;
  }
  const c = answer.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration)
    throw new Error('STS answered AssumeRole without credentials');
  return {
    client: tracer.captureAWSv3Client(
      createDocumentClient({
        region: cfg.region,
        endpoint: cfg.dynamoEndpoint,
        maxAttempts: cfg.dynamoMaxAttempts,
        timeoutMs: cfg.dynamoTimeoutMs,
        credentials: {
          accessKeyId: c.AccessKeyId,
          secretAccessKey: c.SecretAccessKey,
          sessionToken: c.SessionToken,
          expiration: c.Expiration,
        },
      }),
    ),
    renewAt: c.Expiration.getTime() - RENEW_BEFORE_MS,
  };
}

async function fencedClient(kind: FenceKind, tenantId: string, signal: AbortSignal | undefined): Promise<DynamoDBDocumentClient> {
  // The token's tenant claim is never empty (lib/auth/identity.ts); an empty tag would name no tenant.
  if (tenantId === '') throw httpError(403, 'The token names no tenant.');
  const fenced = await sessions[kind].fetch(tenantId, signal ? { signal } : {});
  if (!fenced) throw retryLater(503, 'The tenant credentials are unavailable right now; try again later.');
  return fenced.client;
}

/**
 * The client to read `tenantId`'s data with: fenced to it when fencing is on. `signal` bounds the
 * STS call as it bounds the reads.
 */
export async function tenantDynamo(tenantId: string, signal?: AbortSignal): Promise<DynamoDBDocumentClient> {
  if (config().tenantFencing !== 'iam') return serviceClient;
  return fencedClient('read', tenantId, signal);
}

/**
 * The client to put `tenantId`'s audit items with: when fencing is on, a session that may put
 * only into that tenant's audit partition. The items of a token that named no tenant (`null`) are
 * put with the function's own role, which may put only into their partition (NO_TENANT).
 */
export async function tenantAuditDynamo(tenantId: string | null, signal?: AbortSignal): Promise<DynamoDBDocumentClient> {
  if (config().tenantFencing !== 'iam' || tenantId === null) return serviceClient;
  return fencedClient('audit', tenantId, signal);
}

/** Closes a replaced client's connections once reads still using it have had time to finish. */
function retire(session: Fenced): void {
  setTimeout(() => session.client.destroy(), 60_000).unref();
}
