import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiHostContext,
  PostMessageTransport,
} from '@modelcontextprotocol/ext-apps';
import type { EndpointList } from '../../contract/mcp-tools.js';
import type { EndpointDashboard } from '../../contract/schemas.js';
import { failureForPerson, readResult } from './dashboard-text.js';
import { dashboardView, messageView, type Presentation, sentence } from './dashboard-view.js';
import { reported } from './dom.js';
import { endpointListView } from './endpoint-list-view.js';
import './styles.css';

/**
 * The tools' MCP App view: ext-apps' `App` speaks to the host over postMessage; the host hands it
 * the tool's input, its result and its context (theme, style variables, locale, time zone). It
 * draws an observations dashboard or a list_endpoints table, whichever the result is. It makes no
 * request of its own: what it shows comes from the result. It is never taller than the host allows
 * (`containerDimensions`): past that it scrolls inside, the list's filter and headers kept in view.
 */

const root = document.getElementById('root') as HTMLElement;
let context: McpUiHostContext = {};
let shown: { dashboard: EndpointDashboard } | { list: EndpointList } | { view: HTMLElement } = {
  view: messageView('waiting', 'Endpoint read service', ['Waiting for the tool result…']),
};
/** The text of the last tool result, shown beside the sentence when the result cannot be drawn. */
let toolText = '';
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
  if (change.containerDimensions) applyHeightCap(change.containerDimensions);
}

/**
 * The most height the host gives the view (a fixed height or a maximum), as the CSS variable
 * `--cap` with `data-capped` on <html>: the page is then never taller (ext-apps measures
 * <html> for the size it reports) and scrolls inside (styles.css).
 */
function applyHeightCap(dimensions: NonNullable<McpUiHostContext['containerDimensions']>): void {
  const cap = 'height' in dimensions ? dimensions.height : dimensions.maxHeight;
  const html = document.documentElement;
  if (typeof cap === 'number' && Number.isFinite(cap) && cap > 0) {
    html.style.setProperty('--cap', `${Math.floor(cap)}px`);
    html.dataset.capped = 'true';
  } else {
    html.style.removeProperty('--cap');
    delete html.dataset.capped;
  }
}

/**
 * Draws what is shown now; a result the view fails to draw (whatever the reason) becomes one
 * sentence saying so, with the tool's own text, never a page left waiting.
 */
function draw(): void {
  try {
    drawShown();
  } catch (error) {
    console.error('endpoint-health-dashboard: cannot draw the result:', error);
    shown = { view: unreadable('This result could not be drawn; the text the tool gave follows.') };
    drawShown();
  }
}

/** The page's clock and the host's locale and time zone, for the times the view writes. */
function presentation(): Presentation {
  return { now: Date.now(), locale: context.locale, timeZone: context.timeZone };
}

function unreadable(why: string): HTMLElement {
  return messageView('error', 'Cannot show this result', [why], { text: toolText || 'The tool gave no text.', p: presentation() });
}

/** A failed read: what the person can do when the tool's sentence speaks to a model, else the tool's sentence as the view draws text. */
function failed(): HTMLElement {
  const forPerson = failureForPerson(toolText);
  const text = forPerson !== undefined ? [forPerson] : toolText ? sentence(toolText, presentation()) : ['The tool reported an error.'];
  return messageView('error', 'The read failed', text);
}

/** Draws what is shown now, at the current width; a dashboard is drawn again when its observation expires. */
function drawShown(): void {
  clearTimeout(expiryTimer);
  if ('view' in shown) {
    root.replaceChildren(shown.view);
    return;
  }
  if ('list' in shown) {
    // Drawn once per result: sorting and filtering then change the table in place.
    root.replaceChildren(endpointListView(shown.list, presentation()));
    shown = { view: root.firstElementChild as HTMLElement };
    return;
  }
  const p = presentation();
  root.replaceChildren(dashboardView(shown.dashboard, p, chartWidth()));
  const expires = shown.dashboard.expires_at === null ? Number.NaN : Date.parse(shown.dashboard.expires_at);
  // setTimeout holds at most about 24.8 days; an observation expires within minutes.
  if (expires > p.now && expires - p.now < 2 ** 31 - 1) expiryTimer = setTimeout(draw, expires - p.now + 50);
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
  const hostname = typeof args?.hostname === 'string' ? args.hostname : undefined;
  // What the input quotes (an agent id, a part of a hostname) is isolated and marked like any reported value.
  shown = agent
    ? { view: messageView('waiting', 'Endpoint health', ['Reading the dashboard of ', reported(agent), '…']) }
    : hostname
      ? { view: messageView('waiting', 'Endpoints', ['Reading the endpoints whose hostname contains ', reported(hostname), '…']) }
      : { view: messageView('waiting', 'Endpoints', ['Reading the endpoints…']) };
  draw();
};
app.ontoolresult = (result) => {
  toolText = textOf(result.content);
  const readable = result.isError ? undefined : readResult(result.structuredContent);
  if (result.isError) {
    shown = { view: failed() };
  } else if (readable) {
    shown = readable;
  } else {
    shown = { view: unreadable('This result holds no dashboard and no endpoint list the view can read; the text the tool gave follows.') };
  }
  draw();
};
app.ontoolcancelled = ({ reason }) => {
  shown = { view: messageView('other', 'Cancelled', [reason ?? 'The read was cancelled.']) };
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
    shown = { view: messageView('error', 'No host', [`This view is drawn by an MCP host; it could not reach one (${String(error)}).`]) };
    draw();
  },
);
