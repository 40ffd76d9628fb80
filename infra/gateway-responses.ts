/**
 * The public REST API's gateway responses: what API Gateway answers itself when it refuses or
 * fails a request before (or instead of) a function's answer. One table, used twice: `npm run
 * build` writes the template's `AWS::ApiGateway::GatewayResponse` resources from it
 * (dist/gateway-responses.json, included by serverless.yml), and the local gateway
 * (local/gateway.ts) answers its refusals from it, so the two cannot drift.
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
 * local gateway names the request's origin when lib/mcp/cors.ts admits it (docs/decisions.md).
 */
import { bearerChallenge } from '../lib/auth/challenge.js';
import { DOORS, type DoorName } from '../lib/auth/public-doors.js';
import type { Config } from '../lib/config.js';
import { isAllowedOrigin, MCP_EXPOSED_HEADERS } from '../lib/mcp/cors.js';
import { FAILURE_HEADERS, failureBody } from '../lib/responses.js';

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
  cfg: Pick<Config, 'publicUrl' | 'requiredScope'>,
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

/** The request's one `Origin` when lib/mcp/cors.ts admits it (the service's own, or one of MCP_ALLOWED_ORIGINS), else undefined. */
export function admittedOrigin(origins: readonly string[], cfg: Pick<Config, 'publicUrl' | 'mcpAllowedOrigins'>): string | undefined {
  const [origin, ...more] = origins;
  return more.length === 0 && isAllowedOrigin(origin, cfg) ? origin : undefined;
}

/** `$context.requestId`, `$context.authorizer.<key>`: the simple substitution API Gateway makes in gateway response bodies. */
function substitute(template: string, variables: Readonly<Record<string, string>>): string {
  return template.replace(/\$context\.((?:[A-Za-z0-9_]+\.)*[A-Za-z0-9_]+)/g, (_whole, name: string) => variables[name] ?? '');
}

export interface RenderedGatewayResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A gateway response as the local gateway sends it: the same headers, and the body with the
 * request id and the authorizer's context filled in. `status` is the case's own, for the defaults.
 * `origins` are the request's `Origin` values: an admitted one is named in Access-Control-Allow-Origin.
 */
export function renderGatewayResponse(
  type: GatewayResponseType,
  values: {
    requestId: string;
    authorizer?: Readonly<Record<string, string>>;
    status?: number;
    origins?: readonly string[];
    cfg: Pick<Config, 'publicUrl' | 'mcpAllowedOrigins' | 'requiredScope'>;
    /** Local stack only: a sentence added to the response's own, saying what AWS's gateway response cannot (why a token was refused). */
    localNote?: string;
  },
): RenderedGatewayResponse {
  const definition = gatewayResponse(type);
  const variables: Record<string, string> = { requestId: values.requestId };
  for (const [key, value] of Object.entries(values.authorizer ?? {})) variables[`authorizer.${key}`] = value;
  return {
    status: definition.status ?? values.status ?? (type === 'DEFAULT_4XX' ? 400 : 500),
    headers: gatewayResponseHeaders(definition, values.cfg, admittedOrigin(values.origins ?? [], values.cfg)),
    body: substitute(
      values.localNote
        ? failureBody(`${definition.sentence} ${values.localNote}`, '$context.requestId')
        : gatewayResponseBodyTemplate(definition),
      variables,
    ),
  };
}

/**
 * The two payload limits in front of a function, and what AWS answers past each: the one pair of
 * refusals no gateway response can word (API Gateway's important notes for REST APIs: customizing
 * the 413 REQUEST_TOO_LARGE response is not supported; a REQUEST_TOO_LARGE gateway response is
 * ignored, as those who tried report), so the local gateway answers them as AWS does:
 * - API Gateway's REST payload quota, 10 MB (10,485,760 bytes) of body, is checked before the
 *   authorizer: `413`, `Content-Type: text; charset=utf-8`, `HTTP content length exceeded 10485760 bytes.`;
 * - Lambda's synchronous invocation payload, 6 MB (6,291,456 bytes) of event JSON, is checked
 *   when API Gateway invokes the function: `413`, `application/json`, `x-amzn-ErrorType:
 *   BadRequestException`, `{"message": "Request Too Long"}` (as reported from AWS; Lambda's own
 *   guide says only that an invocation Lambda refuses is an error from API Gateway).
 */
export const PAYLOAD_LIMITS = Object.freeze({ apiGatewayBytes: 10_485_760, lambdaInvocationBytes: 6_291_456 });

/** AWS's own answer to a request past one of PAYLOAD_LIMITS (no CORS header: it is not a gateway response). */
export function payloadTooLargeAnswer(limit: keyof typeof PAYLOAD_LIMITS): RenderedGatewayResponse {
  return limit === 'apiGatewayBytes'
    ? {
        status: 413,
        headers: { 'Content-Type': 'text; charset=utf-8' },
        body: `HTTP content length exceeded ${PAYLOAD_LIMITS.apiGatewayBytes} bytes.`,
      }
    : {
        status: 413,
        headers: { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'BadRequestException' },
        body: '{"message": "Request Too Long"}',
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
