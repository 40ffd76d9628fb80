/**
 * The public REST API's gateway responses: what API Gateway answers itself when it refuses or
 * fails a request before (or instead of) a function's answer. One table, used twice: `npm run
 * build` writes the template's `AWS::ApiGateway::GatewayResponse` resources from it
 * (dist/gateway-responses.json, included by serverless.yml), and the local gateway answers its
 * refusals from it (infra/public-api-answers-cli.ts writes them for the stack's values, in a
 * process of their own: local/public-api-answers.ts), so the two cannot drift.
 *
 * Every one is a failure in the contract's words (DESIGN §6): `text/plain; charset=utf-8`, one
 * sentence and the request id as lib/responses.ts failureBody writes them, `Cache-Control: no-store`,
 * `Retry-After` where waiting helps, and every 401 with the challenge of its door
 * (lib/auth/challenge.ts). Gateway response bodies get simple `$context` substitution (no VTL), and
 * their headers are static or copied from the request: which door refuses with which type is
 * decided in lib/auth/public-doors.ts.
 *
 * CORS: every gateway response says `Vary: Origin` and exposes the challenge and protocol headers,
 * so a browser-based MCP client at an admitted origin can read a 401 and start its sign-in. The
 * origin it names cannot be chosen per request on AWS (a header value is a literal or a copy, never
 * a condition): the template names one browser origin, the `mcpBrowserOrigin` stage parameter; the
 * local gateway names the request's origin when lib/mcp/cors.ts admits it (docs/decisions.md): no
 * header here names one unless told (gatewayResponseHeaders).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { bearerChallenge } from '../lib/auth/challenge.js';
import { DOORS, type DoorName } from '../lib/auth/public-doors.js';
import type { Settings } from '../lib/config.js';
import { MCP_EXPOSED_HEADERS } from '../lib/mcp/cors.js';
import { FAILURE_HEADERS, failureBody } from '../lib/responses.js';
import { writeFileAtomically } from './build-views.js';

export type GatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'THROTTLED'
  | 'QUOTA_EXCEEDED'
  | 'INVALID_API_KEY'
  | 'INTEGRATION_TIMEOUT'
  | 'INTEGRATION_FAILURE'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'RESOURCE_NOT_FOUND'
  | 'WAF_FILTERED'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponseDefinition {
  type: GatewayResponseType;
  /** The status sent; absent for the two defaults, which keep the status of the case they cover. */
  status?: number;
  /** One sentence; `$context.<name>` is filled in by API Gateway (and by the local gateway). */
  sentence: string;
  retryAfterSeconds?: number;
  /** A 401: the door whose RFC 9728 document its `WWW-Authenticate` names. */
  challenge?: DoorName;
}

/** Which door answers which 401 type, from lib/auth/public-doors.ts: UNAUTHORIZED for an `Unauthorized` error, ACCESS_DENIED for a Deny. */
function doorRefusingWith(refusal: 'unauthorized' | 'deny'): DoorName {
  const door = Object.values(DOORS).find((d) => d.refusal === refusal);
  if (!door) throw new Error(`no door refuses with ${refusal} (lib/auth/public-doors.ts)`);
  return door.name;
}

/** The variable the ACCESS_DENIED body takes the authorizer's sentence from (lib/auth/authorizer.ts, REFUSAL_CONTEXT_KEY). */
const AUTHORIZER_REFUSAL = '$context.authorizer.refusal';

export const GATEWAY_RESPONSES: readonly GatewayResponseDefinition[] = Object.freeze([
  {
    type: 'UNAUTHORIZED',
    status: 401,
    sentence: 'A valid bearer token issued for this MCP server is required; none was sent, or the one sent was refused.',
    challenge: doorRefusingWith('unauthorized'),
  },
  { type: 'ACCESS_DENIED', status: 401, sentence: AUTHORIZER_REFUSAL, challenge: doorRefusingWith('deny') },
  {
    type: 'AUTHORIZER_FAILURE',
    status: 503,
    sentence: 'The bearer token could not be checked right now; try again later.',
    retryAfterSeconds: 5,
  },
  {
    type: 'AUTHORIZER_CONFIGURATION_ERROR',
    status: 503,
    sentence: 'The bearer token could not be checked because of a problem on our side; try again later.',
    retryAfterSeconds: 30,
  },
  { type: 'THROTTLED', status: 429, sentence: 'Too many requests; slow down and try again in a moment.', retryAfterSeconds: 1 },
  { type: 'QUOTA_EXCEEDED', status: 429, sentence: 'The request quota is used up; try again later.', retryAfterSeconds: 60 },
  // The authorizer named a tenant whose API key is in no usage plan of the stage (lib/auth/usage-key.ts): not set up yet.
  {
    type: 'INVALID_API_KEY',
    status: 403,
    sentence: "Requests for this tenant are not accepted yet: it has no usage plan here; ask the service's operator to set it up.",
  },
  { type: 'INTEGRATION_TIMEOUT', status: 504, sentence: 'The service did not answer in time; try again.' },
  { type: 'INTEGRATION_FAILURE', status: 502, sentence: 'The service failed to answer; try again later.', retryAfterSeconds: 5 },
  { type: 'MISSING_AUTHENTICATION_TOKEN', status: 404, sentence: 'No such route.' },
  { type: 'RESOURCE_NOT_FOUND', status: 404, sentence: 'No such route.' },
  {
    type: 'WAF_FILTERED',
    status: 429,
    // Every rule of the web ACL blocks through this one response: the per-IP and per-token rates, and AWS's managed rules.
    sentence:
      'The firewall refused this request (too many requests from this client, or a request it takes for an attack); try again in a few minutes.',
    retryAfterSeconds: 60,
  },
  { type: 'DEFAULT_4XX', sentence: 'The request was refused by the gateway.' },
  { type: 'DEFAULT_5XX', sentence: 'The gateway failed to handle the request; try again later.' },
] satisfies GatewayResponseDefinition[]);

export function gatewayResponse(type: GatewayResponseType): GatewayResponseDefinition {
  const found = GATEWAY_RESPONSES.find((r) => r.type === type);
  if (!found) throw new Error(`no gateway response ${type}`);
  return found;
}

/** The body template, in failureBody's form with API Gateway's request id. */
export function gatewayResponseBodyTemplate(definition: GatewayResponseDefinition): string {
  return failureBody(definition.sentence, '$context.requestId');
}

/**
 * The headers of a gateway response, for a public URL (a literal, or the template's
 * `${param:publicUrl}`) and the browser origin its answer is readable from (none: no
 * `Access-Control-Allow-Origin`, and no browser page can read it).
 */
export function gatewayResponseHeaders(
  definition: GatewayResponseDefinition,
  cfg: Pick<Settings, 'publicUrl' | 'requiredScope'>,
  browserOrigin?: string,
): Record<string, string> {
  return {
    ...FAILURE_HEADERS,
    ...(definition.retryAfterSeconds !== undefined ? { 'Retry-After': String(definition.retryAfterSeconds) } : {}),
    ...(definition.challenge ? { 'WWW-Authenticate': bearerChallenge(cfg, definition.challenge) } : {}),
    Vary: 'Origin',
    'Access-Control-Expose-Headers': MCP_EXPOSED_HEADERS.join(', '),
    ...(browserOrigin ? { 'Access-Control-Allow-Origin': browserOrigin } : {}),
  };
}

/** Logical id of a gateway response of the public REST API in the template. */
export function gatewayResponseLogicalId(type: GatewayResponseType): string {
  const words = type
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return `PublicApiGatewayResponse${words.join('').replace('4xx', '4XX').replace('5xx', '5XX')}`;
}

/**
 * The template's gateway responses of the public REST API (osls names it ApiGatewayRestApi), as a
 * CloudFormation `Resources` map. Header values are static, quoted as API Gateway wants them; the
 * public URL and the one browser origin are the stage parameters osls fills in. The same body is given for `application/json`
 * (what API Gateway uses when the client's Accept names no template) and `text/plain`, and
 * `Content-Type` is set as a header, so the client gets text/plain whatever it asked for.
 */
export function gatewayResponseResources(
  publicUrl = '${param:publicUrl}',
  browserOrigin = '${param:mcpBrowserOrigin}',
  // A static header cannot leave the attribute out: with requiredScope empty its 401s say scope="".
  requiredScope = '${param:requiredScope}',
): Record<string, unknown> {
  const resources: Record<string, unknown> = {};
  for (const definition of GATEWAY_RESPONSES) {
    const body = gatewayResponseBodyTemplate(definition);
    const parameters: Record<string, string> = {};
    for (const [name, value] of Object.entries(gatewayResponseHeaders(definition, { publicUrl, requiredScope }, browserOrigin)))
      parameters[`gatewayresponse.header.${name}`] = `'${value}'`;
    resources[gatewayResponseLogicalId(definition.type)] = {
      Type: 'AWS::ApiGateway::GatewayResponse',
      Properties: {
        RestApiId: { Ref: 'ApiGatewayRestApi' },
        ResponseType: definition.type,
        ...(definition.status !== undefined ? { StatusCode: String(definition.status) } : {}),
        ResponseParameters: parameters,
        ResponseTemplates: { 'application/json': body, 'text/plain': body },
      },
    };
  }
  return resources;
}

/**
 * The public REST API's gateway responses as a template fragment (`<dist>/gateway-responses.json`,
 * included by serverless.yml), written by `npm run build` (infra/build-cli.ts).
 */
export function writeGatewayResponses(dist: string): void {
  mkdirSync(dist, { recursive: true });
  writeFileAtomically(
    join(dist, 'gateway-responses.json'),
    `${JSON.stringify({ resources: { Resources: gatewayResponseResources() } }, null, 2)}\n`,
  );
}
