/**
 * Percent used as the contract serves it: a finite number from 0 to 100, or `null` when the agent
 * did not report the metric.
 */

/**
 * A stored metric value as a contract percent. Invariant: `null` stays `null` (never `0`); a value
 * within 0–100 is returned unchanged; a finite value outside it is clamped to the nearest bound
 * (an agent that reports 100.4% is full, not unknown, and must not make the response invalid); a
 * non-finite value is not a measurement and reads as `null`.
 */
export function toPercent(value: number | null): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  return Math.min(100, Math.max(0, value));
}

/**
 * A percent for people, e.g. `42.5%`. Twelve significant digits hide binary-float noise
 * (0.1 + 0.2) without rounding a value across a threshold (84.999 stays 84.999).
 */
export function formatPercent(value: number): string {
  return `${Number(value.toPrecision(12))}%`;
}
