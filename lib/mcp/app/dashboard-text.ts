import { EndpointList } from '../../contract/mcp-tools.js';
import { type ConnectionState, type DashboardSample, EndpointDashboard, type MetricKey, type Status } from '../../contract/schemas.js';
import { splitQuoted } from '../reported-text.js';

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

/** A time as the service writes it in its sentences (ISO 8601 with a zone: `2026-11-27T10:00:00.000Z`). */
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/g;

/** A part of a sentence of the service's: its own words, a value an endpoint reported, or a time. */
export type SentencePart = string | { reported: string } | { time: string };

/**
 * A sentence of the service's (a metric's or a finding's detail, a tool's text) as the view draws
 * it: its own words, each time it writes (ISO 8601) apart so the view can write it as it writes
 * every other time, and each value it quotes as a code span (lib/mcp/reported-text.ts) read back
 * to the value, so the view shows it as a reported value and no backtick, markdown's, reaches the page.
 */
export function sentenceParts(text: string): SentencePart[] {
  return splitQuoted(text).flatMap((part): SentencePart[] => {
    if (typeof part !== 'string') return [{ reported: part.quoted }];
    const parts: SentencePart[] = [];
    let from = 0;
    for (const match of part.matchAll(ISO_TIME)) {
      if (Number.isNaN(Date.parse(match[0]))) continue;
      if (match.index > from) parts.push(part.slice(from, match.index));
      parts.push({ time: match[0] });
      from = match.index + match[0].length;
    }
    if (from < part.length) parts.push(part.slice(from));
    return parts;
  });
}

/** The tool's sentence for a tenant that requires a ticket, which tells a model how to call again; its ticket system, and a request id after it. */
const TICKET_REQUIRED = /^This tenant requires a ticket for every read\b.*?\bsystem "([^"]+)".*?(\(request id: [^)]*\))?$/s;

/**
 * A failed read's sentence as the person looking at the view can act on it. The tool's sentences
 * are for whoever reads the tool's text, a model among them; the one that tells a model how to
 * call the tool again (a ticket the tenant requires) is said here as what the person does. The
 * others read the same to a person and are shown as they are (undefined).
 */
export function failureForPerson(toolText: string): string | undefined {
  const ticket = TICKET_REQUIRED.exec(toolText.trim());
  if (!ticket) return undefined;
  const requestId = ticket[2] ? ` ${ticket[2]}` : '';
  return `Nothing was read: this tenant requires a ticket for every read. Give the number of your ${ticket[1]} ticket (such as INC0012345) and read again.${requestId}`;
}

/** What one series of the history holds, for the chart's text alternative; null when it holds no value at all. */
export interface SeriesFacts {
  min: number;
  max: number;
  /** The newest value reported in the window. */
  newest: number;
  /** Stretches of samples without a value, each drawn as a break in the line. */
  gaps: number;
}

export function seriesFacts(history: readonly DashboardSample[], key: MetricKey): SeriesFacts | null {
  const values: number[] = [];
  let gaps = 0;
  let previous: number | null | undefined;
  for (const sample of history) {
    const value = sample[key];
    if (value === null && previous !== null) gaps += 1;
    if (value !== null) values.push(value);
    previous = value;
  }
  const newest = values.at(-1);
  return newest === undefined ? null : { min: Math.min(...values), max: Math.max(...values), newest, gaps };
}

/** One series in words: "CPU: 12% to 80%, newest 80%, 2 gaps", or "Memory: no data" when it holds no value. */
export function seriesText(name: string, facts: SeriesFacts | null): string {
  if (facts === null) return `${name}: no data`;
  const range = facts.min === facts.max ? percentText(facts.min) : `${percentText(facts.min)} to ${percentText(facts.max)}`;
  const gaps = facts.gaps === 0 ? 'no gaps' : `${facts.gaps} gap${facts.gaps === 1 ? '' : 's'}`;
  return `${name}: ${range}, newest ${percentText(facts.newest)}, ${gaps}`;
}

const NUMERIC = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/**
 * Two version strings in the order a person expects: by their numeric parts (4.0.4 before 4.0.10),
 * a pre-release before its release (4.2.1-rc.3 before 4.2.1, as semantic versioning ranks them),
 * build metadata (+…) only to break a tie. Any other text is compared with digits as numbers.
 * Reported versions need not be semantic versions, so a semver parser would refuse some: the
 * platform's numeric collation takes any text.
 */
export function compareVersions(a: string, b: string): number {
  const [coreA = '', preA, buildA = ''] = versionParts(a);
  const [coreB = '', preB, buildB = ''] = versionParts(b);
  return (
    NUMERIC.compare(coreA, coreB) ||
    (preA === preB ? 0 : preA === undefined ? 1 : preB === undefined ? -1 : NUMERIC.compare(preA, preB)) ||
    NUMERIC.compare(buildA, buildB)
  );
}

/** A version as core, pre-release (undefined when none) and build: "v4.2.1-rc.3+build" → ["4.2.1", "rc.3", "build"]. */
function versionParts(tagged: string): [string, string | undefined, string] {
  // "v4.0.3" is 4.0.3.
  const version = /^[vV]\d/.test(tagged) ? tagged.slice(1) : tagged;
  const plus = version.indexOf('+');
  const withoutBuild = plus === -1 ? version : version.slice(0, plus);
  const build = plus === -1 ? '' : version.slice(plus + 1);
  // A pre-release follows the first hyphen after a digit ("4.2.1-rc.3"), not one inside a word ("beta-build").
  const dash = /^\d[\d.]*-/.exec(withoutBuild);
  if (!dash) return [withoutBuild, undefined, build];
  return [withoutBuild.slice(0, dash[0].length - 1), withoutBuild.slice(dash[0].length), build];
}

/**
 * A tool result's structuredContent as this view can draw it: an endpoint dashboard or an endpoint
 * list exactly as the contract defines them (the same zod types the server checks its results
 * against), else undefined. A value the contract does not allow (a time that is no time, a percent
 * past 100) is never half drawn.
 */
export function readResult(value: unknown): { dashboard: EndpointDashboard } | { list: EndpointList } | undefined {
  const dashboard = EndpointDashboard.safeParse(value);
  if (dashboard.success) return { dashboard: dashboard.data };
  const list = EndpointList.safeParse(value);
  return list.success ? { list: list.data } : undefined;
}
