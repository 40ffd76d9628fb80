import type { EndpointList } from '../../contract/mcp-tools.js';
import type { AgentSummary } from '../../contract/schemas.js';
import { agoText, CONNECTION_STATES } from './dashboard-text.js';
import type { Presentation } from './dashboard-view.js';
import { el, statusBadge } from './dom.js';

/**
 * The list_endpoints result as a table a person can sort and filter, within the result the host
 * handed over (the view asks for nothing more). Everything an endpoint reported is text (dom.ts);
 * a field the inventory omits (never reported) reads "never" or "unknown", never blank.
 */

interface Column {
  key: string;
  title: string;
  /** What the column sorts by. */
  value: (a: AgentSummary) => string | number;
  cell: (a: AgentSummary, p: Presentation) => Node | string;
}

/** The connection states from best to worst, so a sort by state puts the trouble together. */
const STATE_ORDER = ['connected', 'stale', 'disconnected', 'never_connected'] as const;

const COLUMNS: readonly Column[] = [
  {
    key: 'hostname',
    title: 'Hostname',
    value: (a) => a.hostname.toLowerCase(),
    cell: (a) => el('span', { class: 'hostname-cell' }, a.hostname),
  },
  {
    key: 'state',
    title: 'State',
    value: (a) => STATE_ORDER.indexOf(a.connection_state),
    cell: (a) => statusBadge(CONNECTION_STATES[a.connection_state].status, 'small', CONNECTION_STATES[a.connection_state].word),
  },
  {
    key: 'heartbeat',
    title: 'Last heartbeat',
    // Never heard from sorts as the oldest.
    value: (a) => (a.last_heartbeat ? Date.parse(a.last_heartbeat) : Number.NEGATIVE_INFINITY),
    cell: (a, p) =>
      a.last_heartbeat
        ? el('time', { datetime: a.last_heartbeat }, agoText(a.last_heartbeat, p.now))
        : el('span', { class: 'none' }, 'never'),
  },
  { key: 'os', title: 'OS', value: (a) => `${a.os} ${a.arch}`.toLowerCase(), cell: (a) => `${a.os}/${a.arch}` },
  { key: 'version', title: 'Version', value: (a) => a.version, cell: (a) => a.version },
  { key: 'agent', title: 'Agent', value: (a) => a.agent_id, cell: (a) => el('span', { class: 'agent-id' }, a.agent_id) },
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
  return kept.sort((x, y) => {
    const a = column.value(x);
    const b = column.value(y);
    return a < b ? -sign : a > b ? sign : 0;
  });
}

/** How many the result holds against how many match, in words ("unknown" when the read stopped early). */
function countLine(list: EndpointList): string {
  const shown = `${list.endpoints.length} endpoint${list.endpoints.length === 1 ? '' : 's'}`;
  if (list.truncated) return `${shown}: the first in inventory order; more match (how many is unknown: the read stopped there).`;
  return `${shown} of ${list.total ?? 'unknown'} in the tenant that you may see.`;
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
    body.replaceChildren(
      ...rows.map((a) =>
        el(
          'tr',
          { 'data-agent': a.agent_id, 'data-state': a.connection_state },
          ...COLUMNS.map((c) => el('td', { 'data-column': c.key }, c.cell(a, p))),
        ),
      ),
    );
    for (const th of headers) {
      if (order && th.dataset.column === order.key) th.setAttribute('aria-sort', order.direction);
      else th.removeAttribute('aria-sort');
    }
    status.textContent = filter.trim() ? `${rows.length} of ${list.endpoints.length} shown (filter: ${filter.trim()})` : '';
  };
  const input = el('input', {
    type: 'search',
    class: 'filter',
    placeholder: 'Filter by hostname, agent, OS or version',
    'aria-label': 'Filter endpoints',
  });
  input.addEventListener('input', () => {
    filter = input.value;
    fill();
  });
  fill();
  const table =
    list.endpoints.length === 0
      ? el('p', { class: 'empty' }, 'No endpoint matches: this is a real, empty answer, not a failed read.')
      : el('div', { class: 'table-box' }, el('table', { class: 'endpoints' }, el('thead', {}, el('tr', {}, ...headers)), body));
  return el(
    'main',
    { class: 'endpoint-list' },
    el('header', { class: 'list-head' }, el('h1', {}, 'Endpoints'), el('p', { class: 'count' }, countLine(list))),
    list.endpoints.length === 0 ? null : input,
    status,
    table,
  );
}
