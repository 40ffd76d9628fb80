/**
 * The MCP App views this server offers: each one's `ui://` URI, name and description (as
 * `resources/list` shows them) and the HTML file `npm run build` writes beside the MCP bundle
 * (infra/build-views.ts, from the sources of this folder). Read by the server and the build.
 */
export const OBSERVATIONS_VIEW = Object.freeze({
  uri: 'ui://endpoint-read-service/observations.html',
  file: 'observations-view.html',
  name: 'Endpoint health dashboard view',
  description: 'The observations dashboard: status, metrics, history, findings.',
});
