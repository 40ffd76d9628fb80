import type { DashboardMetric, MetricKey } from '../contract/schemas.js';
import type { SampleRecord } from '../data-format/records.js';
import { METRIC_DEFINITIONS } from './metric-definitions.js';
import { formatPercent, toPercent } from './percent.js';
import { statusOf } from './status.js';
import { describeThresholds, type ThresholdsInForce } from './thresholds.js';

/**
 * The three metrics valued from the newest sample of the window, or `null` as the newest sample
 * when the window holds none. Invariants: exactly cpu, memory, disk in that order; a missing value
 * is `null` with status `unknown` (never `0`, never `ok`); every `detail` names the thresholds.
 */
export function evaluateMetrics(
  newestInWindow: SampleRecord | null,
  thresholds: Readonly<Record<MetricKey, ThresholdsInForce>>,
  windowMinutes: number,
): DashboardMetric[] {
  return METRIC_DEFINITIONS.map(({ key, label }) => {
    const t = thresholds[key];
    const value = newestInWindow ? toPercent(newestInWindow[key]) : null;
    let said: string;
    if (!newestInWindow) said = `${label}: no sample in the last ${windowMinutes} minutes`;
    else if (value === null) said = `${label} was not reported in the newest sample (observed at ${newestInWindow.observed_at})`;
    else said = `${label} is ${formatPercent(value)}`;
    return { key, label, value, status: statusOf(value, t), detail: `${said}; ${describeThresholds(t)}.` };
  });
}
