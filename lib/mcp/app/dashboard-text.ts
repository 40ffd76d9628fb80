import type { EndpointList } from '../../contract/mcp-tools.js';
import type { ConnectionState, EndpointDashboard, MetricKey, Status } from '../../contract/schemas.js';

/**
 * The words of the view, kept apart from the DOM so they can be tested in Node: statuses and
 * connection states as words, values as percent or "unknown" (a null is never 0), windows and times.
 */

/** Each status as a word: the badge's text, beside its shape and colour. */
export const STATUS_WORDS: Readonly<Record<Status, string>> = Object.freeze({
  ok: 'OK',
  warning: 'Warning',
  critical: 'Critical',
  unknown: 'Unknown',
});

/**
 * Each connection state as a word, and the status whose shape and colour it is drawn with: the
 * status the dashboard gives it as a finding (connectivity: disconnected and stale are warnings,
 * never connected is unknown).
 */
export const CONNECTION_STATES: Readonly<Record<ConnectionState, { word: string; status: Status }>> = Object.freeze({
  connected: { word: 'Connected', status: 'ok' },
  stale: { word: 'Stale', status: 'warning' },
  disconnected: { word: 'Disconnected', status: 'warning' },
  never_connected: { word: 'Never connected', status: 'unknown' },
});

/** The three metrics in the contract's order, with the chart's short names. */
export const METRICS: readonly { key: MetricKey; short: string }[] = Object.freeze([
  { key: 'cpu', short: 'CPU' },
  { key: 'memory', short: 'Memory' },
  { key: 'disk', short: 'Disk' },
]);

/** A metric's value as a person reads it: "unknown" when not reported, never "0%". */
export function percentText(value: number | null): string {
  if (value === null) return 'unknown';
  return `${Number.isInteger(value) ? value : value.toFixed(1)}%`;
}

/** Whether the newest observation is past its `expires_at` at `now` (no observation: nothing to expire). */
export function isExpired(dashboard: Pick<EndpointDashboard, 'expires_at'>, now: number): boolean {
  return dashboard.expires_at !== null && Date.parse(dashboard.expires_at) <= now;
}

/** How long ago `iso` was at `now`, in a few words ("just now", "12 min ago", "3 h ago", "2 days ago"). */
export function agoText(iso: string, now: number): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 0) return 'in the future';
  if (seconds < 60) return 'just now';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

/** The window as words: "the last 60 minutes", "the last 6 hours", "the last 7 days". */
export function windowText(minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? 'the last 24 hours' : `the last ${minutes / 1440} days`;
  if (minutes % 60 === 0 && minutes > 60) return `the last ${minutes / 60} hours`;
  return `the last ${minutes} minutes`;
}

/** Whether a tool result's structuredContent is an endpoint dashboard this view can draw. */
export function isDashboard(value: unknown): value is EndpointDashboard {
  const d = value as Partial<EndpointDashboard> | null;
  return (
    typeof d === 'object' && d !== null && d.schema === 'endpoint-dashboard/v1' && typeof d.endpoint === 'object' && d.endpoint !== null
  );
}

/** Whether a tool result's structuredContent is an endpoint list (list_endpoints) this view can draw. */
export function isEndpointList(value: unknown): value is EndpointList {
  const l = value as Partial<EndpointList> | null;
  return typeof l === 'object' && l !== null && Array.isArray(l.endpoints) && typeof l.truncated === 'boolean';
}
