import { readFile } from 'node:fs/promises';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import type { McpServer } from '@modelcontextprotocol/server';
import { logger } from '../observability/logger.js';
import { ENDPOINT_VIEW } from './app/manifest.js';

/**
 * The MCP App view (extension `io.modelcontextprotocol/ui`) of the observations tool: an HTML
 * document a host draws in a sandboxed frame and hands the tool's result to. It is one
 * self-contained file that `npm run build` writes beside the MCP bundle (infra/build-views.ts;
 * source in lib/mcp/app/). The bundle never imports it: it is read when a client first asks for
 * it and kept, so the door's cold start and bundle do not grow with it. Registered with the SDK's
 * own `registerResource`: ext-apps' helper adds only the MIME type, which is taken from it.
 */

/** What a host may let the view reach: no domain at all (all it shows comes from the tool result); a bordered box. */
const VIEW_META = Object.freeze({ ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } });

/** The view's HTML, read once per process; a failed read is not kept, so the next request tries again. */
let html: Promise<string> | undefined;

/**
 * Registers the view as a `ui://` resource of type `text/html;profile=mcp-app` on a fresh server.
 * Its HTML is read beside the running module: the bundle's folder, the Lambda task root (locally
 * too: each function runs its bundle in a sandbox whose task root is its folder).
 */
export function registerViews(server: McpServer): void {
  const { uri, name, description, file } = ENDPOINT_VIEW;
  server.registerResource(name, uri, { description, mimeType: RESOURCE_MIME_TYPE, _meta: VIEW_META }, async () => {
    try {
      html ??= readFile(new URL(file, import.meta.url), 'utf8');
      return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: await html, _meta: VIEW_META }] };
    } catch (error) {
      html = undefined;
      logger.error('view unreadable', { message: (error as Error).message });
      throw new Error('The view is unavailable; the tool results hold the same data.');
    }
  });
}
