import type { ConnectionState, DashboardFinding, DashboardMetric, FindingScope, MetricKey } from '../contract/schemas.js';
import type { SampleRecord } from '../data-format/records.js';
import { formatPercent } from './percent.js';
import { compareStatus } from './status.js';
import type { ThresholdsInForce } from './thresholds.js';

const SCOPE_RANK: Readonly<Record<FindingScope, number>> = Object.freeze({
  connectivity: 0,
  observation: 1,
  metric: 2,
});

/**
 * What the connection state says is wrong. Invariant: `connected` gives no finding; a known loss of
 * contact (`disconnected`, `stale`) is a `warning`; `never_connected` is `unknown` (no evidence).
 */
export function connectivityFinding(
  state: ConnectionState,
  lastHeartbeat: string | null,
  onlineGraceSeconds: number,
): DashboardFinding | null {
  switch (state) {
    case 'connected':
      return null;
    case 'stale':
      return {
        scope: 'connectivity',
        label: 'Endpoint connection stale',
        detail:
          lastHeartbeat === null
            ? 'The agent is connected to the broker but has sent no heartbeat.'
            : `The agent is connected to the broker but its last heartbeat (${lastHeartbeat}) is older than the ${onlineGraceSeconds}-second online grace.`,
        status: 'warning',
      };
    case 'disconnected':
      return {
        scope: 'connectivity',
        label: 'Endpoint disconnected',
        detail:
          lastHeartbeat === null
            ? 'The agent disconnected from the broker; no heartbeat was ever recorded.'
            : `The agent disconnected from the broker; its last heartbeat was at ${lastHeartbeat}.`,
        status: 'warning',
      };
    case 'never_connected':
      return {
        scope: 'connectivity',
        label: 'Endpoint never connected',
        detail: 'The agent has never connected to the broker, so its current state is unknown.',
        status: 'unknown',
      };
  }
}

export interface ObservationFacts {
  newestInWindow: SampleRecord | null;
  newestEver: SampleRecord | null;
  /** `observed_at` + TTL of the newest sample in the window, else null. */
  expiresAt: string | null;
  windowMinutes: number;
  now: Date;
  /** Stored samples left out because they cannot be read (0 when none). */
  unreadableSamples?: number;
}

/**
 * What is wrong with the evidence itself, all `unknown`: no sample in the window (saying when the
 * newest ever was), never any sample within retention, or a newest sample already expired
 * (strictly: expired when `expires_at` is before `now`; a sample expiring exactly now still holds);
 * and, besides any of these, stored samples that could not be read, with their count. An endpoint
 * whose only samples cannot be read did report: it gets the unreadable finding, not "Never reported".
 */
export function observationFindings(facts: ObservationFacts): DashboardFinding[] {
  const unreadable = facts.unreadableSamples ?? 0;
  const findings = evidenceFindings(facts, unreadable);
  if (unreadable > 0) {
    findings.push({
      scope: 'observation',
      label: 'Unreadable samples',
      detail: `${unreadable} stored sample${unreadable === 1 ? '' : 's'} of this endpoint could not be read (corrupt records) and ${unreadable === 1 ? 'is' : 'are'} left out of the metrics and the history, so its health may be incomplete.`,
      status: 'unknown',
    });
  }
  return findings;
}

function evidenceFindings(facts: ObservationFacts, unreadable: number): DashboardFinding[] {
  const { newestInWindow, newestEver, expiresAt, windowMinutes, now } = facts;
  if (!newestInWindow && !newestEver) {
    if (unreadable > 0) return [];
    return [
      {
        scope: 'observation',
        label: 'Never reported',
        detail: 'The endpoint has not reported any sample within retention, so its health is unknown.',
        status: 'unknown',
      },
    ];
  }
  if (!newestInWindow && newestEver) {
    return [
      {
        scope: 'observation',
        label: 'No sample in the window',
        detail: `The endpoint reported no sample in the last ${windowMinutes} minutes; its newest sample was observed at ${newestEver.observed_at}.`,
        status: 'unknown',
      },
    ];
  }
  if (newestInWindow && expiresAt !== null && Date.parse(expiresAt) < now.getTime()) {
    return [
      {
        scope: 'observation',
        label: 'Observation expired',
        detail: `The newest sample was observed at ${newestInWindow.observed_at} and expired at ${expiresAt}, before this evaluation at ${now.toISOString()}; its values may no longer hold.`,
        status: 'unknown',
      },
    ];
  }
  return [];
}

/**
 * One finding per metric that is wrong: at `warning` or `critical` (its own status), or not
 * reported in the newest sample (`unknown`). Metrics with an empty window give none: the
 * observation finding already says there is no sample. Invariant: cpu, memory, disk order.
 */
export function metricFindings(
  metrics: readonly DashboardMetric[],
  thresholds: Readonly<Record<MetricKey, ThresholdsInForce>>,
  newestInWindow: SampleRecord | null,
): DashboardFinding[] {
  if (!newestInWindow) return [];
  const findings: DashboardFinding[] = [];
  for (const metric of metrics) {
    const t = thresholds[metric.key];
    if (metric.value === null) {
      findings.push({
        scope: 'metric',
        label: `${metric.label} not reported`,
        detail: `The newest sample (observed at ${newestInWindow.observed_at}) has no ${metric.label} value; its status is unknown, not healthy.`,
        status: 'unknown',
      });
    } else if (metric.status === 'critical') {
      findings.push({
        scope: 'metric',
        label: `${metric.label} critical`,
        detail: `${metric.label} is ${formatPercent(metric.value)}, at or above the critical threshold of ${formatPercent(t.critical)}.`,
        status: 'critical',
      });
    } else if (metric.status === 'warning') {
      findings.push({
        scope: 'metric',
        label: `${metric.label} high`,
        detail: `${metric.label} is ${formatPercent(metric.value)}, at or above the warning threshold of ${formatPercent(t.warning)} (critical at ${formatPercent(t.critical)}).`,
        status: 'warning',
      });
    }
  }
  return findings;
}

/**
 * Findings worst first, then by scope (connectivity, observation, metric). Invariant: the sort is
 * stable, so findings of equal status and scope keep their input order (metrics: cpu, memory, disk).
 */
export function sortFindings(findings: readonly DashboardFinding[]): DashboardFinding[] {
  return [...findings].sort((a, b) => compareStatus(a.status, b.status) || SCOPE_RANK[a.scope] - SCOPE_RANK[b.scope]);
}
