import type { DoorName } from '../../lib/auth/doors.js';

/**
 * The REST APIs' routes, for both listeners: method and resource to the deployed function,
 * the door whose token authorizer guards it (or none), and how its answer is sent. Each listener's
 * router (infra/local/router.ts) matches them, exactly as API Gateway matches a REST resource
 * without path parameters. It mirrors the template's REST APIs (serverless.yml's `http` events for the public one,
 * infra/private-api.yml for the private one); test/infra/template-public-api.test.ts proves they agree.
 */

/** The deployed functions the routes reach (infra/build.ts FUNCTIONS has their entry modules). */
export type RouteFunction = 'inventory' | 'mcp' | 'observations';

/** BUFFERED: the function returns its whole answer; STREAM: it writes it as it goes (`transferMode: STREAM`). */
export type TransferMode = 'BUFFERED' | 'STREAM';

export interface Route {
  /** The public REST API, or the private one (the broker's VPC endpoint; locally the loopback listener). */
  api: 'public' | 'private';
  method: string;
  resource: string;
  function: RouteFunction;
  authorizer: DoorName | null;
  transferMode: TransferMode;
}

/** An RFC 9728 document: GET, and the preflight a browser-based client's GET with `Mcp-Protocol-Version` needs. */
const metadata = (resource: string): Route[] =>
  ['GET', 'OPTIONS'].map((method) => ({ api: 'public', method, resource, function: 'mcp', authorizer: null, transferMode: 'BUFFERED' }));

export const ROUTES: readonly Route[] = Object.freeze([
  { api: 'public', method: 'GET', resource: '/api/agents', function: 'inventory', authorizer: 'inventory', transferMode: 'STREAM' },
  { api: 'public', method: 'POST', resource: '/api/mcp', function: 'mcp', authorizer: 'mcp', transferMode: 'BUFFERED' },
  // A stateless server offers no event stream and no session to delete: the function answers 405.
  { api: 'public', method: 'GET', resource: '/api/mcp', function: 'mcp', authorizer: 'mcp', transferMode: 'BUFFERED' },
  { api: 'public', method: 'DELETE', resource: '/api/mcp', function: 'mcp', authorizer: 'mcp', transferMode: 'BUFFERED' },
  // A browser's CORS preflight carries no token: answered by the MCP function, without an authorizer.
  { api: 'public', method: 'OPTIONS', resource: '/api/mcp', function: 'mcp', authorizer: null, transferMode: 'BUFFERED' },
  // RFC 9728 documents, public and without a token: how clients find the issuer.
  ...metadata('/.well-known/oauth-protected-resource/api/mcp'),
  ...metadata('/.well-known/oauth-protected-resource'),
  ...metadata('/.well-known/oauth-protected-resource/api/agents'),
  { api: 'private', method: 'GET', resource: '/api/mcp/endpoint', function: 'observations', authorizer: null, transferMode: 'BUFFERED' },
] satisfies Route[]);
