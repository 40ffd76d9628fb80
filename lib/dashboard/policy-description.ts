import type { MetricKey } from '../contract/schemas.js';
import type { TenantPolicy } from '../data-format/records.js';
import { METRIC_DEFINITIONS } from './metric-definitions.js';
import { describeThresholds, type ThresholdsInForce } from './thresholds.js';

export interface PolicyFacts {
  thresholds: Readonly<Record<MetricKey, ThresholdsInForce>>;
  ticket: TenantPolicy['ticket'];
  observationTtlSeconds: number;
  onlineGraceSeconds: number;
}

/**
 * The policy in force, in plain words for the person or model reading the dashboard: units, the
 * thresholds of every metric (naming tenant overrides), the observation TTL, the online grace and
 * whether a ticket is required. Invariant: every number that decided a status appears in it.
 */
export function describePolicy(facts: PolicyFacts): string {
  const thresholds = METRIC_DEFINITIONS.map(({ key, label }) => `${label} ${describeThresholds(facts.thresholds[key])}`);
  const ticket =
    facts.ticket === 'required'
      ? "A ticket is required by the tenant's policy to read observations."
      : 'A ticket is optional to read observations.';
  return [
    'Values are percent used, from 0 to 100.',
    `Thresholds: ${thresholds.join('; ')}.`,
    "A value at or above a threshold takes that threshold's status; a metric that was not reported is unknown, never healthy.",
    `An observation expires ${facts.observationTtlSeconds} seconds after it was observed.`,
    `An endpoint counts as connected while its last heartbeat is within the online grace of ${facts.onlineGraceSeconds} seconds.`,
    ticket,
  ].join(' ');
}
