import { Client, StreamableHTTPClientTransport, type Tool } from '@modelcontextprotocol/client';
import {
  AppBridge,
  getToolUiResourceUri,
  type McpUiHostContext,
  type McpUiResourceCsp,
  PostMessageTransport,
} from '@modelcontextprotocol/ext-apps/app-bridge';

/**
 * The local preview host's page: what an MCP host does with an MCP App, in a browser. A real MCP
 * client (the SDK's, declaring the `io.modelcontextprotocol/ui` extension) connects to the local
 * MCP door with a token of the local issuer, finds the tool's view in `tools/list`,
 * reads it (`resources/read`), draws it in a sandboxed frame (scripts only, an opaque origin, a
 * Content-Security-Policy built from the view's own `_meta.ui.csp`), and speaks to it through
 * ext-apps' AppBridge: the host context (theme, width, locale), the tool's input, then its result.
 */

interface PreviewSettings {
  mcpUrl: string;
  token: string;
  tool: string;
  arguments: Record<string, unknown>;
  theme: 'light' | 'dark';
  /** The chat column's width in CSS pixels, or null for the page's. */
  width: number | null;
  /** The most height the host gives the view (MCP Inspector's panel: 750), or null for no cap of its own. */
  maxHeight: number | null;
}

/** The height a host without a cap of its own still gives a view at most. */
const DEFAULT_MAX_HEIGHT = 4000;

const HOST_INFO = { name: 'endpoint-read-service preview host', version: '1.0.0' };
const UI_EXTENSION = 'io.modelcontextprotocol/ui';
const MCP_APP_MIME = 'text/html;profile=mcp-app';

const settings = JSON.parse((document.getElementById('preview-settings') as HTMLElement).textContent ?? '{}') as PreviewSettings;
const column = document.getElementById('column') as HTMLElement;
const log = document.getElementById('log') as HTMLElement;

function say(line: string): void {
  log.textContent = `${log.textContent ?? ''}${line}\n`;
}

/** The policy a host puts around a view: nothing but what its `_meta.ui.csp` names (here: nothing). */
function contentSecurityPolicy(csp: McpUiResourceCsp | undefined): string {
  const list = (domains: string[] | undefined, none = "'none'") => (domains && domains.length > 0 ? domains.join(' ') : none);
  const resources = list(csp?.resourceDomains, '');
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: ${resources}`.trim(),
    `font-src ${list(csp?.resourceDomains)}`,
    `connect-src ${list(csp?.connectDomains)}`,
    `frame-src ${list(csp?.frameDomains)}`,
    `base-uri ${list(csp?.baseUriDomains)}`,
  ].join('; ');
}

/** The view's HTML with the host's policy first in its head, so it holds before any of the view's code runs. */
function withPolicy(html: string, policy: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, '&quot;')}">`;
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (head) => `${head}${meta}`) : `${meta}${html}`;
}

function hostContext(): McpUiHostContext {
  const width = column.clientWidth;
  return {
    theme: settings.theme,
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    containerDimensions: { width, maxHeight: settings.maxHeight ?? DEFAULT_MAX_HEIGHT },
    // A browser may report a POSIX-style language (en-US@posix) that no Intl API takes: only a BCP 47 tag is passed on.
    locale: Intl.DateTimeFormat().resolvedOptions().locale,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: 'web',
  };
}

interface View {
  uri: string;
  html: string;
  csp: McpUiResourceCsp | undefined;
}

/** The tool's view as `resources/read` gives it, read once per URI (both tools name the same one). */
const views = new Map<string, Promise<View>>();
function viewOf(client: Client, uri: string): Promise<View> {
  let view = views.get(uri);
  if (!view) {
    view = client.readResource({ uri }).then(({ contents }) => {
      const html = contents.find((c) => c.uri === uri && 'text' in c);
      if (!html || !('text' in html) || html.mimeType !== MCP_APP_MIME) throw new Error(`${uri} is not an MCP App view`);
      say(`read ${uri} (${html.text.length} characters, ${html.mimeType})`);
      return { uri, html: html.text, csp: (html._meta?.ui as { csp?: McpUiResourceCsp } | undefined)?.csp };
    });
    views.set(uri, view);
  }
  return view;
}

/** One tool call drawn in its own frame, as a host draws each call: the frame, its bridge, the input, the result. */
async function show(client: Client, tool: Tool, args: Record<string, unknown>): Promise<void> {
  document.body.dataset.state = 'loading';
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`the server names no view for the tool ${tool.name}`);
  const view = await viewOf(client, uri);
  const frame = document.createElement('iframe');
  frame.title = tool.title ?? tool.name;
  // Scripts only: no same origin (an opaque one), no forms, no popups, no top navigation.
  frame.setAttribute('sandbox', 'allow-scripts');
  column.replaceChildren(frame);
  const target = frame.contentWindow as Window;

  // The bridge listens before the view loads: the view's first message (ui/initialize) comes as its script runs.
  const bridge = new AppBridge(client, HOST_INFO, { serverTools: {}, serverResources: {}, logging: {} }, { hostContext: hostContext() });
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) frame.style.height = `${Math.min(height, settings.maxHeight ?? DEFAULT_MAX_HEIGHT)}px`;
  };
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  await bridge.connect(new PostMessageTransport(target, target));
  frame.srcdoc = withPolicy(view.html, contentSecurityPolicy(view.csp));
  await initialized;

  await bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name: tool.name, arguments: args });
  say(`called ${tool.name} ${JSON.stringify(args)}: ${result.isError ? 'error' : 'ok'}`);
  await bridge.sendToolResult(result as Parameters<AppBridge['sendToolResult']>[0]);
  current = bridge;
  document.body.dataset.state = 'shown';
}

let current: AppBridge | undefined;

async function main(): Promise<void> {
  document.documentElement.dataset.theme = settings.theme;
  if (settings.width !== null) column.style.width = `${settings.width}px`;

  const client = new Client(HOST_INFO, { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [MCP_APP_MIME] } } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(settings.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${settings.token}` } },
    }),
  );
  say(`connected to ${settings.mcpUrl} (protocol ${client.getNegotiatedProtocolVersion() ?? 'unknown'})`);
  const { tools } = await client.listTools();
  const toolNamed = (name: string): Tool => {
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new Error(`the server has no tool ${name}`);
    return tool;
  };

  new ResizeObserver(() => current?.setHostContext(hostContext())).observe(column);
  // What the page offers its user (and a test driving it): another call drawn anew, the host's theme switched.
  (window as unknown as { previewHost: unknown }).previewHost = {
    /** Calls `tool` (default the page's) with `args` and draws its result in a new frame. */
    show: (args: Record<string, unknown>, tool = settings.tool) =>
      show(client, toolNamed(tool), tool === settings.tool ? { ...settings.arguments, ...args } : args),
    setTheme(theme: 'light' | 'dark') {
      settings.theme = theme;
      document.documentElement.dataset.theme = theme;
      current?.setHostContext(hostContext());
    },
    /** Narrows or widens the chat column (null: the page's width); the view hears of it in the host context. */
    setWidth(width: number | null) {
      column.style.width = width === null ? '' : `${width}px`;
    },
  };
  await show(client, toolNamed(settings.tool), settings.arguments);
}

main().catch((error: unknown) => {
  say(`failed: ${error instanceof Error ? error.message : String(error)}`);
  document.body.dataset.state = 'failed';
});
