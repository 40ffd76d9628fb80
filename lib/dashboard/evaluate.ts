import type { ConnectionState, DashboardEndpoint, EndpointDashboard } from '../contract/schemas.js';
import { DASHBOARD_SCHEMA } from '../contract/schemas.js';
import type { SampleRecord, TenantPolicy } from '../data-format/records.js';
import { downsample } from './downsample.js';
import { evaluateMetrics } from './evaluate-metrics.js';
import { connectivityFinding, metricFindings, observationFindings, sortFindings } from './findings.js';
import { describePolicy } from './policy-description.js';
import { worstStatus } from './status.js';
import { thresholdsInForce } from './thresholds.js';

export { downsample } from './downsample.js';
export { statusOf, worstStatus } from './status.js';
export { DEFAULT_THRESHOLDS } from './thresholds.js';

export interface DashboardInput {
  endpoint: DashboardEndpoint;
  /** Computed by the caller (inventory rules, DESIGN §4). */
  connectionState: ConnectionState;
  /** Samples with window start <= observed_at <= now, oldest first. */
  windowSamples: readonly SampleRecord[];
  /** The newest sample within retention; passed only when `windowSamples` is empty, else null. */
  newestEver: SampleRecord | null;
  /** Stored samples the read left out because they cannot be read (default 0); named in a finding. */
  unreadableSamples?: number;
  policy: TenantPolicy;
  /** Window length in minutes. */
  minutes: number;
  /** Maximum history length. */
  limit: number;
  now: Date;
  observationTtlSeconds: number;
  /** Only described in `policy_description`; the caller already applied it to `connectionState`. */
  onlineGraceSeconds: number;
}

/**
 * The newest sample by `observed_at`; on a tie the later one in input (oldest-first) order. Times
 * are in the store's fixed-width UTC form, so the newest is the greatest string.
 */
function newestOf(samples: readonly SampleRecord[]): SampleRecord | null {
  let newest: SampleRecord | null = null;
  for (const sample of samples) {
    if (newest === null || sample.observed_at >= newest.observed_at) newest = sample;
  }
  return newest;
}

/**
 * The dashboard of one endpoint at `now` (DESIGN §4). Pure: no I/O, the clock is an argument.
 *
 * Invariants: the result passes `EndpointDashboard.parse`; a missing observation is `unknown`,
 * never `ok`, and a missing value is `null`, never `0`; `metrics` and `history` are null exactly
 * when the endpoint never reported within retention (a stored sample that cannot be read is a
 * report: never "Never reported"); unreadable samples always give a finding that counts them;
 * `findings` is never null (`[]` when nothing is wrong); `status` is the worst of every metric and
 * finding status.
 */
export function evaluateDashboard(input: DashboardInput): EndpointDashboard {
  const { endpoint, connectionState, windowSamples, policy, minutes, limit, now } = input;
  const newestInWindow = newestOf(windowSamples);
  // The caller passes newestEver only for an empty window; a window sample is newer anyway.
  const newestEver = newestInWindow ?? input.newestEver;
  const unreadableSamples = input.unreadableSamples ?? 0;
  const neverReported = newestEver === null && unreadableSamples === 0;

  const observedAt = newestInWindow?.observed_at ?? null;
  const expiresAt = observedAt === null ? null : new Date(Date.parse(observedAt) + input.observationTtlSeconds * 1000).toISOString();

  const thresholds = thresholdsInForce(policy);
  const metrics = neverReported ? null : evaluateMetrics(newestInWindow, thresholds, minutes);
  const windowStart = new Date(now.getTime() - minutes * 60_000);
  const history = neverReported ? null : downsample(windowSamples, limit, windowStart, now);

  const connectivity = connectivityFinding(connectionState, endpoint.last_heartbeat, input.onlineGraceSeconds);
  const findings = sortFindings([
    ...(connectivity ? [connectivity] : []),
    ...observationFindings({ newestInWindow, newestEver, expiresAt, windowMinutes: minutes, now, unreadableSamples }),
    ...(metrics ? metricFindings(metrics, thresholds, newestInWindow) : []),
  ]);

  return {
    schema: DASHBOARD_SCHEMA,
    endpoint: { ...endpoint },
    evaluated_at: now.toISOString(),
    observed_at: observedAt,
    expires_at: expiresAt,
    window_minutes: minutes,
    status: worstStatus([...(metrics ?? []).map((m) => m.status), ...findings.map((f) => f.status)]),
    metrics,
    history,
    findings,
    policy_description: describePolicy({
      thresholds,
      ticket: policy.ticket,
      observationTtlSeconds: input.observationTtlSeconds,
      onlineGraceSeconds: input.onlineGraceSeconds,
    }),
  };
}
