import type { EndpointDashboard, ObservationsQuery } from '../contract/schemas.js';
import { config } from '../config.js';
import { evaluateDashboard } from '../dashboard/evaluate.js';
import { dependencyFailure, ForbiddenError, NotFoundError } from '../errors.js';
import { connectionStateOf, newerTime } from '../inventory/merge.js';
import { getAgentRecords } from '../store/agents.js';
import { dynamo } from '../store/client.js';
import { getTenantPolicy } from '../store/policy.js';
import { newestSample, querySamples } from '../store/samples.js';
import type { Attribution } from './request.js';

/** The same sentence for an unknown agent and another tenant's agent: existence never leaks. */
export const AGENT_NOT_FOUND = 'No endpoint with that agent_id is visible to you.';

export interface ObservationsRead {
  tenantId: string;
  query: ObservationsQuery;
  attribution: Attribution;
  now: Date;
}

async function store<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    throw dependencyFailure(error, 'observations store');
  }
}

/**
 * getEndpointObservations: the dashboard of one endpoint of the caller's tenant at `now`.
 * Reads: the tenant policy and the agent's records (in parallel), then one paginated Query over the
 * window, and only when the window is empty a one-item Query for the newest sample within retention.
 * A failed read throws (503/504); it never becomes an empty dashboard.
 */
export async function readEndpointObservations({ tenantId, query, attribution, now }: ObservationsRead): Promise<EndpointDashboard> {
  const cfg = config();
  const db = dynamo();
  const [policy, records] = await Promise.all([
    store(getTenantPolicy(db, cfg.dataTable, tenantId)),
    store(getAgentRecords(db, cfg.dataTable, tenantId, query.agent_id)),
  ]);
  if (policy.ticket === 'required' && attribution.ticketNumber === undefined) {
    throw new ForbiddenError('This tenant requires a ticket: send X-Service-Ticket-Number and X-Service-Ticket-System.');
  }
  const base = records.durable ?? records.connection;
  if (!base) throw new NotFoundError(AGENT_NOT_FOUND);

  // Samples past retention may linger until TTL deletion catches up: never read them.
  const retentionStart = new Date(now.getTime() - cfg.sampleRetentionDays * 86_400_000);
  const windowStart = new Date(Math.max(now.getTime() - query.minutes * 60_000, retentionStart.getTime()));
  const windowSamples = await store(querySamples(db, cfg.dataTable, tenantId, query.agent_id, windowStart, now));
  const newestEver =
    windowSamples.length > 0 ? null : ((await store(newestSample(db, cfg.dataTable, tenantId, query.agent_id, retentionStart))) ?? null);

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
    policy,
    minutes: query.minutes,
    limit: query.limit,
    now,
    observationTtlSeconds: cfg.observationTtlSeconds,
    onlineGraceSeconds: cfg.onlineGraceSeconds,
  });
}
