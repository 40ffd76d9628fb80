import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiHostContext,
  PostMessageTransport,
} from '@modelcontextprotocol/ext-apps';
import type { EndpointList } from '../../contract/mcp-tools.js';
import type { EndpointDashboard } from '../../contract/schemas.js';
import { isDashboard, isEndpointList } from './dashboard-text.js';
import { dashboardView, messageView } from './dashboard-view.js';
import { endpointListView } from './endpoint-list-view.js';
import './styles.css';

/**
 * The tools' MCP App view: ext-apps' `App` speaks to the host over postMessage; the host hands it
 * the tool's input, its result and its context (theme, style variables, locale, time zone). It
 * draws an observations dashboard or a list_endpoints table, whichever the result is. It makes no
 * request of its own: what it shows comes from the result.
 */

const root = document.getElementById('root') as HTMLElement;
let context: McpUiHostContext = {};
let shown: { dashboard: EndpointDashboard } | { list: EndpointList } | { view: HTMLElement } = {
  view: messageView('waiting', 'Endpoint read service', 'Waiting for the tool result…'),
};
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

/** A locale or time zone the browser's Intl accepts, else undefined (the browser's own then). */
function usable(kind: 'locale' | 'timeZone', value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  try {
    new Intl.DateTimeFormat(kind === 'locale' ? value : undefined, kind === 'timeZone' ? { timeZone: value } : {});
    return value;
  } catch {
    return undefined;
  }
}

function applyContext(change: McpUiHostContext): void {
  context = {
    ...context,
    ...change,
    locale: usable('locale', change.locale ?? context.locale),
    timeZone: usable('timeZone', change.timeZone ?? context.timeZone),
  };
  if (change.theme) applyDocumentTheme(change.theme);
  if (change.styles?.variables) applyHostStyleVariables(change.styles.variables);
}

/** Draws what is shown now, at the current width; a dashboard is drawn again when its observation expires. */
function draw(): void {
  clearTimeout(expiryTimer);
  if ('view' in shown) {
    root.replaceChildren(shown.view);
    return;
  }
  if ('list' in shown) {
    // Drawn once per result: sorting and filtering then change the table in place.
    root.replaceChildren(endpointListView(shown.list, { now: Date.now(), locale: context.locale, timeZone: context.timeZone }));
    shown = { view: root.firstElementChild as HTMLElement };
    return;
  }
  const now = Date.now();
  const presentation = { now, locale: context.locale, timeZone: context.timeZone };
  root.replaceChildren(dashboardView(shown.dashboard, presentation, chartWidth()));
  const expires = shown.dashboard.expires_at === null ? Number.NaN : Date.parse(shown.dashboard.expires_at);
  // setTimeout holds at most about 24.8 days; an observation expires within minutes.
  if (expires > now && expires - now < 2 ** 31 - 1) expiryTimer = setTimeout(draw, expires - now + 50);
}

/** The width the chart may take: the page's, less its padding. */
function chartWidth(): number {
  const box = root.querySelector('.history') ?? root;
  return box.clientWidth || document.documentElement.clientWidth - 32;
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const first = content.find((c) => (c as { type?: unknown })?.type === 'text') as { text?: unknown } | undefined;
  return typeof first?.text === 'string' ? first.text : '';
}

const app = new App({ name: 'endpoint-health-dashboard', version: '1.0.0' }, {});

app.ontoolinput = ({ arguments: args }) => {
  const agent = typeof args?.agent_id === 'string' ? args.agent_id : undefined;
  shown = agent
    ? { view: messageView('waiting', 'Endpoint health', `Reading the dashboard of ${agent}…`) }
    : { view: messageView('waiting', 'Endpoints', 'Reading the endpoints…') };
  draw();
};
app.ontoolresult = (result) => {
  if (result.isError) {
    shown = { view: messageView('error', 'The read failed', textOf(result.content) || 'The tool reported an error.') };
  } else if (isDashboard(result.structuredContent)) {
    shown = { dashboard: result.structuredContent };
  } else if (isEndpointList(result.structuredContent)) {
    shown = { list: result.structuredContent };
  } else {
    shown = {
      view: messageView('other', 'Nothing to draw', textOf(result.content) || 'The result carries no dashboard and no endpoint list.'),
    };
  }
  draw();
};
app.ontoolcancelled = ({ reason }) => {
  shown = { view: messageView('other', 'Cancelled', reason ?? 'The read was cancelled.') };
  draw();
};
app.onerror = (error) => console.error('endpoint-health-dashboard:', error);
app.onhostcontextchanged = (change) => {
  applyContext(change);
  draw();
};

let lastWidth = 0;
new ResizeObserver(() => {
  const width = document.documentElement.clientWidth;
  if (width !== lastWidth && 'dashboard' in shown) {
    lastWidth = width;
    draw();
  }
}).observe(document.documentElement);

draw();
app.connect(new PostMessageTransport(window.parent, window.parent)).then(
  () => {
    applyContext(app.getHostContext() ?? {});
    draw();
  },
  (error: unknown) => {
    shown = { view: messageView('error', 'No host', `This view is drawn by an MCP host; it could not reach one (${String(error)}).`) };
    draw();
  },
);
