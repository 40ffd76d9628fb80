/**
 * The MCP App view this server offers, for both tools (it draws whichever result it is handed):
 * its `ui://` URI, name and description (as `resources/list` shows them) and the HTML file
 * `npm run build` writes beside the MCP bundle (infra/build-views.ts, from this folder's sources).
 * Read by the server and the build.
 */
export const ENDPOINT_VIEW = Object.freeze({
  uri: 'ui://endpoint-read-service/view.html',
  file: 'endpoint-view.html',
  name: 'Endpoint views',
  description: 'Draws the tool results: the health dashboard, the endpoint list.',
});
