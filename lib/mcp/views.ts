import { readFile } from 'node:fs/promises';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import type { McpServer } from '@modelcontextprotocol/server';
import { logger } from '../observability/logger.js';
import { OBSERVATIONS_VIEW } from './app/manifest.js';

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

let html: Promise<string> | undefined;

/**
 * The view's HTML, read once per process (a failed read is not kept): beside the running module
 * (the bundle's folder, the Lambda task root), else, for code run from the source tree, the build's copy.
 */
function viewHtml(): Promise<string> {
  const file = OBSERVATIONS_VIEW.file;
  html ??= readFile(new URL(file, import.meta.url), 'utf8').catch(() =>
    readFile(new URL(`../../dist/mcp/${file}`, import.meta.url), 'utf8'),
  );
  html.catch(() => {
    html = undefined;
  });
  return html;
}

/** Registers the view as a `ui://` resource of type `text/html;profile=mcp-app` on a fresh server. */
export function registerViews(server: McpServer): void {
  const { uri, name, description } = OBSERVATIONS_VIEW;
  server.registerResource(name, uri, { description, mimeType: RESOURCE_MIME_TYPE, _meta: VIEW_META }, async () => {
    try {
      return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: await viewHtml(), _meta: VIEW_META }] };
    } catch (error) {
      logger.error('MCP App view unreadable', { message: (error as Error).message });
      throw new Error('The view is not available; the tool results carry the same data as text.');
    }
  });
}
