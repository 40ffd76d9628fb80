import { AssumeRoleCommand, type AssumeRoleCommandOutput, STSClient } from '@aws-sdk/client-sts';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LRUCache } from 'lru-cache';
import type { Settings, STORE_SETTINGS } from '../config.js';
import { httpError, retryLater } from '../errors.js';
import { logger } from '../observability/logger.js';
import { traced } from '../observability/tracer.js';
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

const LIFETIME_SECONDS = 3_600;
const RENEW_BEFORE_MS = 5 * 60_000;
const MAX_TENANTS = 256;

/** What the clients are made with: the store's region and bounds, and the fence (off, or the tenant-read role to assume). */
export type StoreConfig = Pick<Settings, (typeof STORE_SETTINGS)[number]>;
/** With the audit fence too: the tenant-audit role. */
export type AuditStoreConfig = StoreConfig & Pick<Settings, 'tenantAuditRoleArn'>;

/** The clients that read one tenant's data. */
export interface TenantReads {
  /** The client to read `tenantId`'s data with: fenced to it when fencing is on. `signal` bounds the STS call as it bounds the reads. */
  forTenant(tenantId: string, signal?: AbortSignal): Promise<DynamoDBDocumentClient>;
}

/** The clients that read one tenant's data and put its audit items. */
export interface TenantStores extends TenantReads {
  /**
   * The client to put `tenantId`'s audit items with: when fencing is on, a session that may put
   * only into that tenant's audit partition. The items of a token that named no tenant (`null`)
   * are put with the function's own role, which may put only into their partition (NO_TENANT).
   */
  forAudit(tenantId: string | null, signal?: AbortSignal): Promise<DynamoDBDocumentClient>;
}

interface Fenced {
  client: DynamoDBDocumentClient;
  renewAt: number;
}

/**
 * The service's own client and the fenced sessions of one function, made once, at its init, from
 * its configuration, and reused across invocations. Timeouts and retries are bounded so a slow or
 * absent engine becomes a 504/503 well inside the Lambda timeout.
 */
function storeClients(cfg: StoreConfig, roles: Readonly<Record<FenceKind, string | undefined>>) {
  const serviceClient = traced(
    createDocumentClient({
      region: cfg.region,
      endpoint: cfg.dynamoEndpoint,
      maxAttempts: cfg.dynamoMaxAttempts,
      timeoutMs: cfg.dynamoTimeoutMs,
    }),
  );
  let sts: STSClient | undefined;
  // STS at another address (a VPC endpoint's name) comes as the SDK reads it, AWS_ENDPOINT_URL_STS,
  // signed with the function's own credentials, as Secrets Manager's does.
  const stsClient = (): STSClient => {
    sts ??= traced(new STSClient({ region: cfg.region, maxAttempts: 2 }));
    return sts;
  };

  async function assumeTenantRole(kind: FenceKind, tenantId: string, signal: AbortSignal | undefined): Promise<Fenced> {
    const role = roles[kind];
    if (role === undefined) throw new Error(`no tenant ${kind} role is configured`);
    let answer: AssumeRoleCommandOutput;
    try {
      answer = await stsClient().send(
        new AssumeRoleCommand({ RoleArn: role, DurationSeconds: LIFETIME_SECONDS, ...tenantSessionRequest(tenantId, kind) }),
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
      client: traced(
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

  /** A fence's sessions, by tenant; a session that leaves (replaced, expired, evicted) has its client closed. */
  const sessionCache = (kind: FenceKind): LRUCache<string, Fenced> =>
    new LRUCache<string, Fenced>({
      max: MAX_TENANTS,
      dispose: (session) => retire(session),
      fetchMethod: async (tenantId, _stale, { signal, options }) => {
        const fenced = await assumeTenantRole(kind, tenantId, signal);
        options.ttl = Math.max(1, fenced.renewAt - Date.now());
        return fenced;
      },
    });
  const sessions: Partial<Record<FenceKind, LRUCache<string, Fenced>>> = {};

  async function fencedClient(kind: FenceKind, tenantId: string, signal: AbortSignal | undefined): Promise<DynamoDBDocumentClient> {
    // The token's tenant claim is never empty (lib/auth/identity.ts); an empty tag would name no tenant.
    if (tenantId === '') throw httpError(403, 'The token names no tenant.');
    sessions[kind] ??= sessionCache(kind);
    const fenced = await sessions[kind].fetch(tenantId, signal ? { signal } : {});
    if (!fenced) throw retryLater(503, 'The tenant credentials are unavailable right now; try again later.');
    return fenced.client;
  }

  return {
    async forTenant(tenantId: string, signal?: AbortSignal): Promise<DynamoDBDocumentClient> {
      if (cfg.tenantFencing !== 'iam') return serviceClient;
      return fencedClient('read', tenantId, signal);
    },
    async forAudit(tenantId: string | null, signal?: AbortSignal): Promise<DynamoDBDocumentClient> {
      if (cfg.tenantFencing !== 'iam' || tenantId === null) return serviceClient;
      return fencedClient('audit', tenantId, signal);
    },
  };
}

/** The clients a function that reads tenants' data uses (the inventory, the MCP door). */
export function tenantReads(cfg: StoreConfig): TenantReads {
  const { forTenant } = storeClients(cfg, { read: cfg.tenantReadRoleArn, audit: undefined });
  return { forTenant };
}

/** The clients of a function that reads tenants' data and puts their audit items (the observations operation). */
export function tenantStores(cfg: AuditStoreConfig): TenantStores {
  return storeClients(cfg, { read: cfg.tenantReadRoleArn, audit: cfg.tenantAuditRoleArn });
}

/** Closes a replaced client's connections once reads still using it have had time to finish. */
function retire(session: Fenced): void {
  setTimeout(() => session.client.destroy(), 60_000).unref();
}
