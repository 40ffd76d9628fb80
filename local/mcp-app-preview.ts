import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LocalIssuer } from './issuer.js';
import type { LocalRoute } from './listener-router.js';
import { LOOPBACK_NAMES } from './own-address.js';
import type { StackConfig } from './settings.js';

/**
 * The local MCP App preview host (local stack only, never deployed, in no function bundle): a page
 * on the public listener, under PREVIEW_PATH, that does what an MCP host such as Claude or VS Code
 * does with the tools' view, against the local MCP door (local/mcp-app-preview/
 * host-page.ts). It is on the door's own origin, which the door admits, so the page's MCP client
 * needs no CORS allowance. It signs in the way the banner does: it hands the page a token for the
 * MCP audience minted by the local issuer (tenant `acme` unless told). Since that token is anyone's
 * for the asking, the page answers only this machine: a loopback peer asking for a loopback host
 * (the listener already refuses any other Host; a peer that is not loopback reaches it only when
 * HOST opts in to another address). Its routes are in the public listener's table (local/listener-router.ts).
 *
 * `GET /preview/observations?agent_id=ac-002[&tenant=acme][&theme=light|dark][&width=320][&height=750][&minutes=60][&limit=100]`
 * `GET /preview/list_endpoints[?tenant=acme][&hostname=…][&connection_state=…][&limit=100][&theme=…][&width=…][&height=…]`
 * (`width=552&height=750` is MCP Inspector's panel; `height` caps the view as a host's containerDimensions.maxHeight does.)
 */

export const PREVIEW_PATH = '/preview/';
/** One page per tool: `/preview/observations`, `/preview/list_endpoints`. */
const TOOLS = ['observations', 'list_endpoints'] as const;
type PreviewTool = (typeof TOOLS)[number];
const SCRIPT_PATH = `${PREVIEW_PATH}host.js`;
/** The page's script source: beside this module, or under the working folder when this module runs bundled (the tests' build of `npm start`). */
const HOST_PAGE_SOURCES = [
  join(dirname(fileURLToPath(import.meta.url)), 'mcp-app-preview', 'host-page.ts'),
  join(process.cwd(), 'local', 'mcp-app-preview', 'host-page.ts'),
];

/** The preview's address for one endpoint, as the banner prints it. */
export function previewUrl(publicUrl: string, agentId: string): string {
  return `${publicUrl}${PREVIEW_PATH}observations?agent_id=${encodeURIComponent(agentId)}`;
}

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...headers });
  res.end(body);
}

function refuse(res: ServerResponse, status: number, sentence: string, headers: Record<string, string> = {}): void {
  send(res, status, 'text/plain; charset=utf-8', `${sentence}\n`, headers);
}

/** This machine only: a loopback peer, naming a loopback host (a DNS-rebound name is refused). */
function fromThisMachine(req: IncomingMessage): boolean {
  const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  return (peer === '127.0.0.1' || peer === '::1') && LOOPBACK_NAMES.includes(host);
}

/** The host page's script, bundled for the browser when first asked for, then kept. */
let hostScript: Promise<string> | undefined;
function bundledHostScript(): Promise<string> {
  const entry = HOST_PAGE_SOURCES.find((file) => existsSync(file)) ?? (HOST_PAGE_SOURCES[0] as string);
  // esbuild is loaded when a preview is first asked for, never by a stack that shows none.
  hostScript ??= import('esbuild')
    .then(({ build }) =>
      build({
        entryPoints: [entry],
        bundle: true,
        format: 'iife',
        platform: 'browser',
        target: ['chrome111', 'firefox114', 'safari16.4'],
        minify: true,
        write: false,
        logLevel: 'warning',
      }),
    )
    .then(({ outputFiles }) => outputFiles[0]?.text ?? '');
  hostScript.catch(() => {
    hostScript = undefined;
  });
  return hostScript;
}

/** JSON inside a <script> element: `<` escaped, so no value can close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** Text for HTML: the few characters that are markup escaped. */
function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function oneParam(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  return values.length === 0 ? undefined : values[0];
}

function wholeNumber(value: string | undefined, min: number, max: number): number | undefined | 'bad' {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  return Number.isInteger(n) && n >= min && n <= max ? n : 'bad';
}

async function page(
  res: ServerResponse,
  tool: PreviewTool,
  params: URLSearchParams,
  issuer: LocalIssuer,
  publicUrl: string,
  cfg: StackConfig,
): Promise<void> {
  const agentId = oneParam(params, 'agent_id')?.trim() || 'ac-002';
  // list_endpoints' filters, as given (the tool checks them).
  const filters: Record<string, string> = Object.fromEntries(
    ['connection_state', 'hostname'].flatMap((name) => {
      const value = oneParam(params, name);
      return value ? [[name, value]] : [];
    }),
  );
  const tenant = oneParam(params, 'tenant')?.trim() || 'acme';
  const theme = oneParam(params, 'theme') ?? 'light';
  const width = wholeNumber(oneParam(params, 'width'), 280, 2000);
  const height = wholeNumber(oneParam(params, 'height'), 200, 4000);
  const minutes = wholeNumber(oneParam(params, 'minutes'), 5, 10080);
  const limit = wholeNumber(oneParam(params, 'limit'), 1, 500);
  if (theme !== 'light' && theme !== 'dark') return refuse(res, 400, 'theme must be light or dark.');
  if (width === 'bad') return refuse(res, 400, 'width must be a whole number of pixels from 280 to 2000.');
  if (height === 'bad') return refuse(res, 400, 'height must be a whole number of pixels from 200 to 4000.');
  if (minutes === 'bad') return refuse(res, 400, 'minutes must be a whole number from 5 to 10080.');
  if (limit === 'bad') return refuse(res, 400, 'limit must be a whole number from 1 to 500.');
  const token = await issuer.sign({
    issuer: cfg.jwtIssuer,
    audience: cfg.mcpAudience,
    tenant,
    tenantClaim: cfg.tenantClaim,
    subject: `preview-user@${tenant}`,
    scope: cfg.requiredScope,
  });
  const settings = {
    mcpUrl: `${publicUrl}/api/mcp`,
    token,
    tool,
    // The tool checks its own arguments: a bad one is an error result, which the view shows.
    arguments:
      tool === 'observations'
        ? {
            agent_id: agentId,
            reason: 'MCP App preview',
            ...(minutes === undefined ? {} : { minutes }),
            ...(limit === undefined ? {} : { limit }),
          }
        : { ...filters, ...(limit === undefined ? {} : { limit }) },
    theme,
    width: width ?? null,
    maxHeight: height ?? null,
  };
  const field = (name: string, label: string, value: string, extra = '') =>
    `<label>${label} <input name="${name}" value="${escapeHtml(value)}" ${extra}></label>`;
  const html = `<!doctype html>
<html lang="en" data-theme="${theme}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>MCP App preview: ${escapeHtml(tool === 'observations' ? agentId : tool)}</title>
<style>
:root { color-scheme: light; --bg: #eef1f5; --panel: #fff; --text: #1b1f24; --muted: #57606a; --line: #d0d7de; }
:root[data-theme='dark'] { color-scheme: dark; --bg: #010409; --panel: #0d1117; --text: #e6edf3; --muted: #9198a1; --line: #30363d; }
body { margin: 0; background: var(--bg); color: var(--text); font: 14px/1.4 system-ui, sans-serif; }
header { padding: 10px 16px; border-bottom: 1px solid var(--line); background: var(--panel); display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; }
header strong { margin-right: 8px; }
form { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; }
input, select, button { font: inherit; }
input[name=agent_id], input[name=tenant], input[name=hostname] { width: 9em; }
input[name=width], input[name=height] { width: 5em; }
#column { margin: 16px; max-width: calc(100% - 32px); }
#column iframe { display: block; width: 100%; border: 1px solid var(--line); border-radius: 10px; background: var(--panel); height: 200px; }
#log { margin: 0 16px 16px; color: var(--muted); font-size: 12px; white-space: pre-wrap; }
</style>
<script type="application/json" id="preview-settings">${scriptJson(settings)}</script>
<script src="${SCRIPT_PATH}" defer></script>
</head>
<body data-state="loading">
<header>
<strong>MCP App preview: ${tool}</strong>
<form method="get" action="${PREVIEW_PATH}${tool}">
${tool === 'observations' ? field('agent_id', 'agent_id', agentId) : field('hostname', 'hostname', filters.hostname ?? '')}
${field('tenant', 'tenant', tenant)}
<label>theme <select name="theme"><option${theme === 'light' ? ' selected' : ''}>light</option><option${theme === 'dark' ? ' selected' : ''}>dark</option></select></label>
${field('width', 'width', width === undefined ? '' : String(width), 'placeholder="full"')}
${field('height', 'height', height === undefined ? '' : String(height), 'placeholder="none"')}
${tool === 'observations' ? field('minutes', 'minutes', minutes === undefined ? '' : String(minutes), 'placeholder="60"') : ''}
<button>Show</button>
</form>
</header>
<div id="column"></div>
<pre id="log"></pre>
</body>
</html>
`;
  send(res, 200, 'text/html; charset=utf-8', html, {
    // Inline scripts allowed: the view's frame is a srcdoc document, which inherits this policy and runs its own inline script.
    'Content-Security-Policy':
      "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    'Referrer-Policy': 'no-referrer',
  });
}

/** The preview host's routes, for the public listener's table: its page per tool, its script, and a 404 for any other preview. */
export function mcpAppPreviewRoutes(options: { issuer: LocalIssuer; publicUrl: () => string; config: StackConfig }): LocalRoute[] {
  const methods = ['GET', 'HEAD'];
  /** A handler that answers this machine only. */
  const local =
    (serve: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>): LocalRoute['handler'] =>
    async (req, res) => {
      if (!fromThisMachine(req)) {
        refuse(res, 403, 'The MCP App preview answers this machine only (a loopback address, as localhost or 127.0.0.1).');
        return;
      }
      await serve(req, res, new URL(req.url ?? '/', 'http://localhost'));
    };
  const toolPage = (tool: PreviewTool): LocalRoute => ({
    methods,
    path: `${PREVIEW_PATH}${tool}`,
    handler: local(async (req, res, url) => {
      const publicUrl = options.publicUrl();
      // The door admits its own origin: the page must be opened there (the public URL's host) for its MCP calls to be.
      if (req.headers.host !== new URL(publicUrl).host) {
        res.writeHead(302, { Location: `${publicUrl}${url.pathname}${url.search}`, 'Cache-Control': 'no-store' });
        res.end();
        return;
      }
      await page(res, tool, url.searchParams, options.issuer, publicUrl, options.config);
    }),
  });
  return [
    ...TOOLS.map(toolPage),
    {
      methods,
      path: SCRIPT_PATH,
      handler: local(async (_req, res) => send(res, 200, 'text/javascript; charset=utf-8', await bundledHostScript())),
    },
    {
      methods,
      path: `${PREVIEW_PATH}*`,
      handler: local(async (_req, res) => refuse(res, 404, `No such preview; try ${previewUrl(options.publicUrl(), 'ac-002')}.`)),
    },
  ];
}
