import type { DashboardMetric, EndpointDashboard } from '../../contract/schemas.js';
import { agoText, isExpired, percentText, sentenceParts, windowText } from './dashboard-text.js';
import { el, marked, reported, statusBadge } from './dom.js';
import { chartLegend, historyChart } from './history-chart.js';

/**
 * One endpoint dashboard as a page: who the endpoint is, its overall status, the three metrics,
 * the history chart and the findings. Everything the endpoint reported is set as text, each value
 * in its own bidi isolate with its hidden characters marked (dom.ts `reported`).
 * The three rules on screen: a null is "unknown" or a gap, never 0; an endpoint that never
 * reported says so; an observation past `expires_at` is marked stale.
 */

export interface Presentation {
  /** The clock of the page (stale marks and "… ago" are relative to it). */
  now: number;
  /** From the host context, for dates and times. */
  locale: string | undefined;
  timeZone: string | undefined;
}

function dateTime(iso: string, p: Presentation): string {
  return new Intl.DateTimeFormat(p.locale, {
    dateStyle: 'medium',
    timeStyle: 'short',
    ...(p.timeZone ? { timeZone: p.timeZone } : {}),
  }).format(new Date(iso));
}

/**
 * A sentence of the service's (a detail, a tool's text) as nodes: its words as text (a character
 * a reader could not see marked, as in a reported value), each time it writes as the footer writes
 * one ("Nov 27, 2026, 10:20 AM", not "2026-11-27T10:20:00.000Z"), each value it quotes as a
 * reported value (no backtick of markdown's on the page).
 */
export function sentence(text: string, p: Presentation): Node[] {
  return sentenceParts(text).flatMap((part) => {
    if (typeof part === 'string') return marked(part);
    if ('time' in part) return [el('time', { datetime: part.time }, dateTime(part.time, p))];
    return [reported(part.reported)];
  });
}

/** A time as "12 min ago" with the exact time in a tooltip and a `datetime` attribute. */
function when(iso: string | null, p: Presentation, none: string): HTMLElement {
  if (iso === null) return el('span', { class: 'none' }, none);
  return el('time', { datetime: iso, title: dateTime(iso, p) }, agoText(iso, p.now));
}

function header(d: EndpointDashboard, p: Presentation): HTMLElement {
  const e = d.endpoint;
  const facts = el(
    'dl',
    { class: 'facts' },
    el('dt', {}, 'Agent'),
    el('dd', { class: 'agent-id' }, reported(e.id)),
    el('dt', {}, 'OS'),
    el('dd', { class: 'os' }, reported(e.os)),
    el('dt', {}, 'Client'),
    el('dd', { class: 'client' }, e.client_name === null ? el('span', { class: 'none' }, 'unknown') : reported(e.client_name)),
    el('dt', {}, 'Last heartbeat'),
    el('dd', { class: 'heartbeat' }, when(e.last_heartbeat, p, 'never')),
  );
  return el(
    'header',
    { class: 'head' },
    el('div', { class: 'who' }, el('h1', { class: 'hostname' }, reported(e.hostname, { hostname: true })), facts),
    el('div', { class: 'overall' }, statusBadge(d.status, 'large', { name: 'Overall status: ' })),
  );
}

/** What the reader must know before reading any number: never reported, nothing in the window, or stale. */
function notices(d: EndpointDashboard, p: Presentation): HTMLElement[] {
  if (d.metrics === null) {
    return [
      el(
        'p',
        { class: 'notice notice-never', role: 'status' },
        el('strong', {}, 'Never reported. '),
        'This endpoint has not sent a single observation within retention, so nothing is known about its health.',
      ),
    ];
  }
  if (d.observed_at === null) {
    return [
      el(
        'p',
        { class: 'notice notice-empty', role: 'status' },
        el('strong', {}, 'No recent observation. '),
        `Nothing was observed in ${windowText(d.window_minutes)}, so the current health is unknown.`,
      ),
    ];
  }
  if (isExpired(d, p.now)) {
    return [
      el(
        'p',
        { class: 'notice notice-stale', role: 'status' },
        el('strong', {}, 'Stale. '),
        'The newest observation expired ',
        when(d.expires_at, p, ''),
        ': these values may no longer be true.',
      ),
    ];
  }
  return [];
}

function metricCard(m: DashboardMetric, p: Presentation): HTMLElement {
  return el(
    'article',
    { class: 'metric', 'data-metric': m.key, 'data-status': m.status },
    el('h2', { class: 'metric-label' }, m.label),
    el(
      'div',
      { class: 'metric-reading' },
      el('p', { class: `metric-value${m.value === null ? ' unknown' : ''}` }, percentText(m.value)),
      statusBadge(m.status, 'small', { name: `${m.label} status: ` }),
    ),
    el('p', { class: 'metric-detail' }, ...sentence(m.detail, p)),
  );
}

function historySection(d: EndpointDashboard, p: Presentation, width: number): HTMLElement | null {
  if (d.history === null) return null;
  const title = el('h2', {}, `History, ${windowText(d.window_minutes)}`);
  if (d.history.length === 0) {
    return el('section', { class: 'history' }, title, el('p', { class: 'empty' }, 'No samples in this window.'));
  }
  const chart = historyChart({
    history: d.history,
    end: Date.parse(d.evaluated_at),
    minutes: d.window_minutes,
    width,
    locale: p.locale,
    timeZone: p.timeZone,
  });
  const count = `${d.history.length} sample${d.history.length === 1 ? '' : 's'}`;
  return el(
    'section',
    { class: 'history' },
    title,
    chartLegend(d.history),
    el('div', { class: 'chart-box' }, chart),
    el('p', { class: 'caption' }, count),
  );
}

function findingsSection(d: EndpointDashboard, p: Presentation): HTMLElement {
  const findings = d.findings ?? [];
  const list =
    findings.length === 0
      ? el('p', { class: 'empty' }, 'No findings: nothing is wrong that the service can see.')
      : el(
          'ul',
          { class: 'findings-list' },
          ...findings.map((f) =>
            el(
              'li',
              { class: 'finding', 'data-status': f.status, 'data-scope': f.scope },
              statusBadge(f.status, 'small', { name: 'Finding status: ' }),
              el('div', {}, el('p', { class: 'finding-label' }, f.label), el('p', { class: 'finding-detail' }, ...sentence(f.detail, p))),
            ),
          ),
        );
  return el('section', { class: 'findings' }, el('h2', {}, 'Findings'), list);
}

/** When the newest observation was: "never" only for an endpoint that never reported, else nothing in the window. */
function observed(d: EndpointDashboard, p: Presentation): (Node | string)[] {
  if (d.observed_at !== null) return ['Observed ', when(d.observed_at, p, '')];
  if (d.metrics === null) return ['Observed ', el('span', { class: 'none' }, 'never')];
  return [`Nothing observed in ${windowText(d.window_minutes)}`];
}

function footer(d: EndpointDashboard, p: Presentation): HTMLElement {
  return el(
    'footer',
    { class: 'foot' },
    el('p', {}, ...observed(d, p), ' · evaluated ', el('time', { datetime: d.evaluated_at }, dateTime(d.evaluated_at, p))),
    el(
      'details',
      { class: 'policy' },
      el('summary', {}, 'How the statuses are decided'),
      el('p', {}, ...sentence(d.policy_description, p)),
    ),
  );
}

/** The whole dashboard; `width` is the width the chart may take. */
export function dashboardView(d: EndpointDashboard, p: Presentation, width: number): HTMLElement {
  const stale = isExpired(d, p.now);
  return el(
    'main',
    { class: 'dashboard', 'data-status': d.status, 'data-stale': String(stale) },
    header(d, p),
    ...notices(d, p),
    d.metrics === null ? null : el('section', { class: 'metrics' }, ...d.metrics.map((m) => metricCard(m, p))),
    historySection(d, p, width),
    findingsSection(d, p),
    footer(d, p),
  );
}

/**
 * What is shown instead of a dashboard or a list: waiting, a failed read, a result that cannot be
 * drawn. `text` is the view's sentence (reported values in it already isolated); `toolText`, when
 * given, is the text the tool itself gave, shown below it line by line as `sentence` draws it
 * (a failed read is never drawn as healthy).
 */
export function messageView(
  kind: 'error' | 'waiting' | 'other',
  title: string,
  text: (Node | string)[],
  toolText?: { text: string; p: Presentation },
): HTMLElement {
  return el(
    'main',
    { class: `message message-${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    el('h1', {}, title),
    el('p', { class: 'message-text' }, ...text),
    toolText
      ? el(
          'p',
          { class: 'tool-text' },
          ...toolText.text.split('\n').flatMap((line, i) => [i === 0 ? null : el('br'), ...sentence(line, toolText.p)]),
        )
      : null,
  );
}
