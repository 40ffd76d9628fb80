import type { EndpointList } from '../../contract/mcp-tools.js';
import type { AgentSummary } from '../../contract/schemas.js';
import { agoText, CONNECTION_STATES, compareVersions } from './dashboard-text.js';
import type { Presentation } from './dashboard-view.js';
import { el, reported, statusBadge } from './dom.js';

/**
 * The list_endpoints result as a table a person can sort and filter, within the result the host
 * handed over (the view asks for nothing more). Everything an endpoint reported is text in its own
 * bidi isolate, hidden characters marked, long values cut with the whole value in a tooltip
 * (dom.ts `reported`); a field the inventory omits (never reported) reads "never", never blank.
 * The table has a fixed layout, so no value can widen it past its box; in a column narrower than
 * 860 px (styles.css) each endpoint is a card and the column headers a row of sort buttons above them.
 */

interface Column {
  key: string;
  title: string;
  /** The order of the column: ascending. */
  compare: (a: AgentSummary, b: AgentSummary) => number;
  cell: (a: AgentSummary, p: Presentation) => Node | Node[] | string;
}

/** The connection states from best to worst, so a sort by state puts the trouble together. */
const STATE_ORDER = ['connected', 'stale', 'disconnected', 'never_connected'] as const;

/** The most characters of a value a cell shows; the rest is in its tooltip. */
const CELL_CHARACTERS = Object.freeze({ hostname: 100, os: 80, arch: 24, version: 40, agent: 64 });

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byNumber = (a: number, b: number): number => a - b;
// Never heard from sorts as the oldest.
const heartbeatTime = (a: AgentSummary): number => (a.last_heartbeat ? Date.parse(a.last_heartbeat) : Number.NEGATIVE_INFINITY);

const COLUMNS: readonly Column[] = [
  {
    key: 'hostname',
    title: 'Hostname',
    compare: (a, b) => byText(a.hostname.toLowerCase(), b.hostname.toLowerCase()),
    cell: (a) => reported(a.hostname, { hostname: true, max: CELL_CHARACTERS.hostname }),
  },
  {
    key: 'state',
    title: 'State',
    compare: (a, b) => byNumber(STATE_ORDER.indexOf(a.connection_state), STATE_ORDER.indexOf(b.connection_state)),
    cell: (a) => statusBadge(CONNECTION_STATES[a.connection_state].status, 'small', { word: CONNECTION_STATES[a.connection_state].word }),
  },
  {
    key: 'heartbeat',
    title: 'Last heartbeat',
    compare: (a, b) => byNumber(heartbeatTime(a), heartbeatTime(b)),
    cell: (a, p) =>
      a.last_heartbeat
        ? el('time', { datetime: a.last_heartbeat }, agoText(a.last_heartbeat, p.now))
        : el('span', { class: 'none' }, 'never'),
  },
  {
    key: 'os',
    title: 'OS',
    compare: (a, b) => byText(`${a.os} ${a.arch}`.toLowerCase(), `${b.os} ${b.arch}`.toLowerCase()),
    // The line may break after the slash: "Edition/" and "x86_64" are words of their own.
    cell: (a) => [
      reported(a.os, { max: CELL_CHARACTERS.os }),
      document.createTextNode('/'),
      el('wbr'),
      reported(a.arch, { max: CELL_CHARACTERS.arch }),
    ],
  },
  {
    key: 'version',
    title: 'Version',
    compare: (a, b) => compareVersions(a.version, b.version),
    cell: (a) => reported(a.version, { max: CELL_CHARACTERS.version }),
  },
  {
    key: 'agent',
    title: 'Agent',
    compare: (a, b) => byText(a.agent_id, b.agent_id),
    cell: (a) => reported(a.agent_id, { class: 'agent-id', max: CELL_CHARACTERS.agent }),
  },
];

type Order = { key: string; direction: 'ascending' | 'descending' } | undefined;

/** The endpoints whose hostname, agent id, OS or version contains `filter` (any case), in `order` (else the inventory's). */
function visible(endpoints: readonly AgentSummary[], filter: string, order: Order): AgentSummary[] {
  const needle = filter.trim().toLowerCase();
  const kept = needle
    ? endpoints.filter((a) => [a.hostname, a.agent_id, a.os, a.arch, a.version].some((v) => v.toLowerCase().includes(needle)))
    : [...endpoints];
  const column = COLUMNS.find((c) => c.key === order?.key);
  if (!column || !order) return kept;
  const sign = order.direction === 'ascending' ? 1 : -1;
  // Stable: equal values keep the inventory's order.
  return kept.sort((x, y) => sign * column.compare(x, y));
}

/** How many the result holds against how many match, in words ("unknown" when the read stopped early). */
function countLine(list: EndpointList): string {
  const shown = `${list.endpoints.length} endpoint${list.endpoints.length === 1 ? '' : 's'}`;
  if (list.truncated) return `${shown}: the first in inventory order; more match (how many is unknown: the read stopped there).`;
  return `${shown} of ${list.total ?? 'unknown'} in the tenant that you may see.`;
}

function row(a: AgentSummary, p: Presentation): HTMLElement {
  return el(
    'tr',
    { 'data-agent': a.agent_id, 'data-state': a.connection_state },
    ...COLUMNS.map((c) => {
      const content = c.cell(a, p);
      return el('td', { 'data-column': c.key, 'data-label': c.title }, ...(Array.isArray(content) ? content : [content]));
    }),
  );
}

/** The whole list view: its count, a filter, the sortable table. */
export function endpointListView(list: EndpointList, p: Presentation): HTMLElement {
  let filter = '';
  let order: Order;
  const body = el('tbody');
  const status = el('p', { class: 'caption', role: 'status' });
  const headers = COLUMNS.map((c) => {
    const button = el('button', { type: 'button', class: 'sort', 'data-column': c.key }, c.title);
    button.addEventListener('click', () => {
      order = { key: c.key, direction: order?.key === c.key && order.direction === 'ascending' ? 'descending' : 'ascending' };
      fill();
    });
    return el('th', { scope: 'col', 'data-column': c.key }, button);
  });
  const fill = (): void => {
    const rows = visible(list.endpoints, filter, order);
    body.replaceChildren(...rows.map((a) => row(a, p)));
    for (const th of headers) {
      if (order && th.dataset.column === order.key) th.setAttribute('aria-sort', order.direction);
      else th.removeAttribute('aria-sort');
    }
    const needle = filter.trim();
    status.replaceChildren(...(needle ? [`${rows.length} of ${list.endpoints.length} shown (filter: `, reported(needle), ')'] : []));
  };
  const input = el('input', {
    type: 'search',
    class: 'filter',
    placeholder: 'Filter: hostname, agent, OS, version',
    'aria-label': 'Filter endpoints',
  });
  input.addEventListener('input', () => {
    filter = input.value;
    fill();
  });
  fill();
  const empty = list.endpoints.length === 0;
  return el(
    'main',
    { class: 'endpoint-list' },
    el('header', { class: 'list-head' }, el('h1', {}, 'Endpoints'), el('p', { class: 'count' }, countLine(list))),
    empty ? null : el('div', { class: 'list-tools' }, input, status),
    empty
      ? el('p', { class: 'empty' }, 'No endpoint matches: this is a real, empty answer, not a failed read.')
      : el('div', { class: 'table-box' }, el('table', { class: 'endpoints' }, el('thead', {}, el('tr', {}, ...headers)), body)),
  );
}
