import manifest from './manifest.json' with { type: 'json' };

/**
 * The MCP App view this server offers, for both tools (it draws whichever result it is handed):
 * its `ui://` URI, name and description (as `resources/list` shows them) and the HTML file
 * `npm run build` writes beside the MCP bundle (infra/build-views.ts, from this folder's sources).
 * Data in manifest.json: the build reads the file name there as it reads the view's sources, and
 * imports nothing of lib/ (so the local stack, which builds the same view, takes no service code).
 */
export const ENDPOINT_VIEW: Readonly<{ uri: string; file: string; name: string; description: string }> = Object.freeze(manifest);
