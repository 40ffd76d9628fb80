import type { MetricKey } from '../contract/schemas.js';

/** The three metrics of a dashboard, in the order the contract serves them (DESIGN §4). */
export const METRIC_DEFINITIONS: ReadonlyArray<{ readonly key: MetricKey; readonly label: string }> = Object.freeze([
  { key: 'cpu', label: 'CPU usage' },
  { key: 'memory', label: 'Memory usage' },
  { key: 'disk', label: 'Disk usage' },
]);
