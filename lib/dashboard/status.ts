import type { Status } from '../contract/schemas.js';

/** The warning and critical thresholds of one metric, in percent used. */
export interface MetricThresholds {
  readonly warning: number;
  readonly critical: number;
}

/**
 * Rank of each status, worst first (critical > warning > unknown > ok). `unknown` ranks above `ok`
 * because a missing observation is no evidence of health.
 */
export const STATUS_RANK: Readonly<Record<Status, number>> = Object.freeze({
  critical: 0,
  warning: 1,
  unknown: 2,
  ok: 3,
});

/**
 * The status of one value against its thresholds. Invariant: `null` is `unknown` (never `ok`); a
 * value exactly at a threshold takes that threshold's status; a real `0` is `ok`.
 */
export function statusOf(value: number | null, t: MetricThresholds): Status {
  if (value === null) return 'unknown';
  // Critical is checked first so that a policy with warning === critical still reports critical.
  if (value >= t.critical) return 'critical';
  if (value >= t.warning) return 'warning';
  return 'ok';
}

/** Orders statuses worst first; usable as an `Array.prototype.sort` comparator. */
export function compareStatus(a: Status, b: Status): number {
  return STATUS_RANK[a] - STATUS_RANK[b];
}

/**
 * The worst of the given statuses by rank critical > warning > unknown > ok. Invariant: `ok` only
 * when nothing worse is present, including when there is nothing at all.
 */
export function worstStatus(statuses: Iterable<Status>): Status {
  let worst: Status = 'ok';
  for (const status of statuses) {
    if (compareStatus(status, worst) < 0) worst = status;
  }
  return worst;
}
