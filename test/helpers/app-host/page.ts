import { AppBridge, type McpUiHostContext, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { TestHost } from './types.js';

/**
 * A bare MCP host for the browser tests, written from ext-apps' AppBridge alone (no MCP client, no
 * server: the test hands it the view's HTML, the tool input and the result), the way any chat app
 * draws an MCP App: a sandboxed frame (scripts only, an opaque origin) in a column of the width the
 * test asks, the host context (theme, width, height cap, locale, time zone), the tool input, the
 * result. It sizes the frame to what the view reports, never past the cap it gave, and keeps each
 * reported size so a test can read them.
 */

const HOST_INFO = { name: 'endpoint-read-service test host', version: '1.0.0' };
const column = document.getElementById('column') as HTMLElement;
let bridge: AppBridge | undefined;
let context: McpUiHostContext = {};

const host: TestHost = {
  view: '',
  sizes: [],
  async mount({ html, width, maxHeight, theme, input, result }) {
    await bridge?.close().catch(() => undefined);
    host.sizes = [];
    column.style.width = `${width}px`;
    document.documentElement.dataset.theme = theme;
    const frame = document.createElement('iframe');
    frame.title = 'Endpoint view';
    frame.setAttribute('sandbox', 'allow-scripts');
    Object.assign(frame.style, { display: 'block', width: '100%', height: '100px', border: '0' });
    column.replaceChildren(frame);
    const target = frame.contentWindow as Window;
    context = {
      theme,
      displayMode: 'inline',
      availableDisplayModes: ['inline'],
      containerDimensions: maxHeight === undefined ? { width } : { width, maxHeight },
      locale: 'en-US',
      timeZone: 'UTC',
      platform: 'web',
    };
    const current = new AppBridge(null, HOST_INFO, {}, { hostContext: context });
    current.onsizechange = ({ height }) => {
      if (height === undefined) return;
      host.sizes.push(height);
      frame.style.height = `${maxHeight === undefined ? height : Math.min(height, maxHeight)}px`;
    };
    const initialized = new Promise<void>((resolve) => {
      current.oninitialized = () => resolve();
    });
    await current.connect(new PostMessageTransport(target, target));
    frame.srcdoc = html ?? host.view;
    await initialized;
    bridge = current;
    if (input) await current.sendToolInput({ arguments: input });
    if (result) await current.sendToolResult(result);
  },
  async sendResult(result) {
    await bridge?.sendToolResult(result);
  },
  async setTheme(theme) {
    document.documentElement.dataset.theme = theme;
    context = { ...context, theme };
    bridge?.setHostContext(context);
  },
};

(window as unknown as { testHost: TestHost }).testHost = host;
