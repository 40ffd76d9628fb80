import { assertScopeAllowed, type EndpointScope, scopeAdmits } from '../auth/endpoint-scope.js';
import type { Settings } from '../config.js';
import { TICKET_REQUIRED } from '../contract/attribution.js';
import type { EndpointDashboard, ObservationsQuery } from '../contract/schemas.js';
import { evaluateDashboard } from '../dashboard/evaluate.js';
import type { SampleRecord } from '../data-format/records.js';
import { dependencyFailure, httpError } from '../errors.js';
import { connectionStateOf, newerTime } from '../inventory/merge.js';
import { logger } from '../observability/logger.js';
import { recordUnreadableRecords, recordUnreadableSamples } from '../observability/metrics.js';
import { getAgentRecordsAndPolicy } from '../store/agents.js';
import { newestSample, querySamples } from '../store/samples.js';
import type { TenantReads } from '../store/tenant-client.js';
import type { Attribution } from './query-and-attribution.js';

/** The same sentence for an unknown agent, another tenant's and one outside the caller's endpoint scope: existence never leaks. */
export const AGENT_NOT_FOUND = 'No endpoint with that agent_id is visible to you.';

/** Where the dashboards are read: the tenants' clients, the data table, and the rules of the evaluation. */
export interface ObservationsSource {
  reads: TenantReads;
  cfg: Pick<Settings, 'dataTable' | 'scopeClaim' | 'sampleRetentionDays' | 'onlineGraceSeconds' | 'observationTtlSeconds'>;
}

export interface ObservationsRead {
  tenantId: string;
  /** The caller's endpoint scope: an endpoint outside it is read as unknown. */
  scope: EndpointScope;
  query: ObservationsQuery;
  attribution: Attribution;
  now: Date;
  /** The invocation's deadline: every read stops with it (a 504). */
  signal?: AbortSignal;
}

/**
 * getEndpointObservations: the dashboard of one endpoint of the caller's tenant at `now`.
 * Reads, both at once: one BatchGetItem for the tenant policy and the agent's two records, and one
 * paginated Query over the window (the window's samples are only used once the policy and the
 * agent allow it, so the order of checks stays: scope policy 403, ticket policy 403, then agent
 * 404, an endpoint outside the caller's scope being the same 404 as an unknown one); and only when
 * the window holds no
 * readable sample, a one-item Query for the newest sample within retention and not after `now`.
 * A failed read throws (502/503/504); it never becomes an empty dashboard. Samples that cannot be
 * read are counted in the `UnreadableSamples` metric and named in a finding, never dropped silently.
 */
export async function readEndpointObservations(source: ObservationsSource, read: ObservationsRead): Promise<EndpointDashboard> {
  try {
    return await readDashboard(source, read);
  } catch (error) {
    // A refusal stands as it is; a failed store read is a 502, 503 or 504 (lib/errors.ts).
    throw dependencyFailure(error, 'observations store');
  }
}

async function readDashboard(
  { reads, cfg }: ObservationsSource,
  { tenantId, scope, query, attribution, now, signal }: ObservationsRead,
): Promise<EndpointDashboard> {
  // The tenant's reads, fenced to its partitions when TENANT_FENCING is iam.
  const db = await reads.forTenant(tenantId, signal);
  // Samples past retention may linger until TTL deletion catches up: never read them.
  const retentionStart = new Date(now.getTime() - cfg.sampleRetentionDays * 86_400_000);
  const windowStart = new Date(Math.max(now.getTime() - query.minutes * 60_000, retentionStart.getTime()));
  const [records, window] = await Promise.all([
    getAgentRecordsAndPolicy(db, cfg.dataTable, tenantId, query.agent_id, signal),
    querySamples(db, cfg.dataTable, tenantId, query.agent_id, windowStart, now, signal),
  ]);
  const { policy } = records;
  assertScopeAllowed(scope, policy, cfg.scopeClaim);
  if (policy.ticket === 'required' && attribution.ticketNumber === undefined) {
    throw httpError(403, TICKET_REQUIRED);
  }
  const base = records.durable ?? records.connection;
  // The endpoint's groups are on its durable record: one known only to the broker is in none.
  if (!base || !scopeAdmits(scope, records.durable?.groups)) throw httpError(404, AGENT_NOT_FOUND);
  if (records.unreadable > 0) {
    logger.warn('left out stored agent records that cannot be read', {
      unreadableRecords: records.unreadable,
      keys: records.unreadableKeys,
    });
  }
  recordUnreadableRecords(records.unreadable);

  const windowSamples = window.samples;
  let unreadableSamples = window.unreadable;
  let unreadableSampleKeys = window.unreadableKeys;
  let newestEver: SampleRecord | null = null;
  if (windowSamples.length === 0) {
    const newest = await newestSample(db, cfg.dataTable, tenantId, query.agent_id, retentionStart, now, signal);
    newestEver = newest.sample ?? null;
    // The newest sample is in the window when the window reaches it; count it once.
    if (newest.unreadable > 0 && window.unreadable === 0) {
      unreadableSamples += newest.unreadable;
      unreadableSampleKeys = newest.unreadableKeys;
    }
  }
  if (unreadableSamples > 0) logger.warn('left out stored samples that cannot be read', { unreadableSamples, keys: unreadableSampleKeys });
  recordUnreadableSamples(unreadableSamples);

  const lastHeartbeat = newerTime(records.durable?.last_heartbeat, records.connection?.last_heartbeat);
  return evaluateDashboard({
    endpoint: {
      id: base.agent_id,
      hostname: base.hostname,
      os: base.os,
      client_name: records.durable?.client_name ?? null,
      last_heartbeat: lastHeartbeat ?? null,
    },
    connectionState: connectionStateOf(records.connection, lastHeartbeat, { now, onlineGraceSeconds: cfg.onlineGraceSeconds }),
    windowSamples,
    newestEver,
    unreadableSamples,
    policy,
    minutes: query.minutes,
    limit: query.limit,
    now,
    observationTtlSeconds: cfg.observationTtlSeconds,
    onlineGraceSeconds: cfg.onlineGraceSeconds,
  });
}
