import type { MetricKey } from '../contract/schemas.js';
import type { TenantPolicy } from '../data-format/records.js';
import { formatPercent } from './percent.js';
import type { MetricThresholds } from './status.js';

/** DESIGN §4: every metric warns at 85% and is critical at 95% unless the tenant policy overrides it. */
export const DEFAULT_THRESHOLDS: MetricThresholds = Object.freeze({ warning: 85, critical: 95 });

/** The thresholds applied to one metric and where they come from. */
export interface ThresholdsInForce extends MetricThresholds {
  readonly source: 'default' | 'tenant';
}

/**
 * The thresholds in force for each metric. Invariant: a tenant override replaces the default for
 * that metric only, and whole (warning and critical together, as the policy schema requires).
 */
export function thresholdsInForce(policy: TenantPolicy): Record<MetricKey, ThresholdsInForce> {
  const pick = (override: MetricThresholds | undefined): ThresholdsInForce =>
    override ? { warning: override.warning, critical: override.critical, source: 'tenant' } : { ...DEFAULT_THRESHOLDS, source: 'default' };
  return {
    cpu: pick(policy.thresholds.cpu),
    memory: pick(policy.thresholds.memory),
    disk: pick(policy.thresholds.disk),
  };
}

/** "warning at 85%, critical at 95% (default thresholds)" */
export function describeThresholds(t: ThresholdsInForce): string {
  const source = t.source === 'tenant' ? 'tenant override' : 'default thresholds';
  return `warning at ${formatPercent(t.warning)}, critical at ${formatPercent(t.critical)} (${source})`;
}
