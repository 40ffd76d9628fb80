import * as z from 'zod';
import { DEFAULT_REQUIRED_SCOPE, OBSERVATIONS_SCOPE } from '../scope-names.js';
import {
  ATTRIBUTION_HEADERS,
  ATTRIBUTION_SOURCE_PATTERN,
  ATTRIBUTION_SOURCES,
  attributionSchema,
  DEFAULT_TICKET_SYSTEM,
  REASON_ENCODING,
} from './attribution.js';
import {
  AgentInventory,
  AgentSummary,
  ConnectionState,
  DashboardEndpoint,
  DashboardFinding,
  DashboardMetric,
  DashboardSample,
  DateTime,
  EndpointDashboard,
  FindingScope,
  MetricKey,
  OBSERVATION_BOUNDS,
  ObservationsQuery,
  Status,
} from './schemas.js';

/**
 * The OpenAPI 3.1 document of the service, built from the zod wire types of `lib/contract`.
 * Field lists, bounds, patterns and nullability come only from those types; this module adds the
 * operations, the prose of DESIGN §4 and §6, and nothing it could get wrong by hand.
 * `npm run openapi` writes it to `openapi.json`; a unit test fails when the committed file drifts.
 */

export type JsonObject = { [key: string]: unknown };

export const CONTRACT_VERSION = '1.0.0';
export const OPERATION_IDS = Object.freeze({
  inventory: 'listEndpointInventory',
  observations: 'getEndpointObservations',
});
export type OperationId = (typeof OPERATION_IDS)[keyof typeof OPERATION_IDS];

export const INVENTORY_PATH = '/api/agents';
export const OBSERVATIONS_PATH = '/api/mcp/endpoint';
export const BEARER_SCHEME = 'bearerAuth';

/**
 * Every named component, by the name the contract uses. Referenced types become `$ref`s, so the
 * long date-time pattern and the status enum appear once.
 */
const COMPONENTS = {
  DateTime,
  Status,
  ConnectionState,
  MetricKey,
  FindingScope,
  AgentSummary,
  AgentInventory,
  DashboardEndpoint,
  DashboardMetric,
  DashboardSample,
  DashboardFinding,
  EndpointDashboard,
} satisfies Record<string, z.core.$ZodType>;

const componentRef = (name: keyof typeof COMPONENTS): JsonObject => ({ $ref: `#/components/schemas/${name}` });

/** A zod schema as a bare JSON Schema 2020-12 object (no `$schema`/`$id`: the document sets the dialect). */
function jsonSchemaOf(schema: z.core.$ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _dialect, $id: _id, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as JsonObject;
  return rest;
}

function componentSchemas(): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, JsonObject> };
  const out: Record<string, JsonObject> = {};
  for (const id of Object.keys(COMPONENTS)) {
    const schema = schemas[id];
    if (!schema) throw new Error(`zod wrote no JSON Schema for the component ${id}`);
    const { $schema: _dialect, $id: _id, ...rest } = schema;
    out[id] = rest;
  }
  return out;
}

/** `x-service-ticket-number` -> `X-Service-Ticket-Number`, the spelling clients read in docs. */
function canonicalHeaderName(lowerCase: string): string {
  return lowerCase
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-');
}

type QueryName = keyof typeof ObservationsQuery.shape;

/**
 * The wire form of each query parameter. ObservationsQuery parses strings (a query string has no
 * integers), so the integer parameters are described from the same bounds it enforces. The mapped
 * type makes a new field of ObservationsQuery a compile error here until it is documented.
 */
function queryParameterSchemas(): Record<QueryName, { schema: JsonObject; description: string }> {
  const { minutes, limit } = OBSERVATION_BOUNDS;
  return {
    agent_id: {
      schema: jsonSchemaOf(ObservationsQuery.shape.agent_id, 'input'),
      description:
        'The endpoint to read, as listed by `GET /api/agents` (`agent_id`). An id that is unknown or belongs to another tenant gets the same 404; the same id in two tenants is two different endpoints.',
    },
    minutes: {
      schema: jsonSchemaOf(z.number().int().min(minutes.min).max(minutes.max).default(minutes.default), 'input'),
      description: `The observation window in minutes, ending at evaluation time (${minutes.max} minutes is seven days). Default ${minutes.default}; echoed as \`window_minutes\`.`,
    },
    limit: {
      schema: jsonSchemaOf(z.number().int().min(limit.min).max(limit.max).default(limit.default), 'input'),
      description: `The most entries \`history\` may hold. Default ${limit.default}. When the window holds more samples, they are downsampled into \`limit\` equal time buckets over the window: each non-empty bucket gives one sample, the mean of its non-null values per metric (\`null\` where all are null), at the time of its newest sample.`,
    },
  };
}

type AttributionKey = keyof typeof ATTRIBUTION_HEADERS;

const ATTRIBUTION_DESCRIPTIONS: Record<AttributionKey, (ticketSystem: string) => string> = {
  reason: () =>
    'Why the read is made, in the words of the user the broker acts for; 3 to 500 characters after trimming (after percent-decoding, when `X-Service-Reason-Encoding` says so). Recorded in the audit item of the read.',
  reasonEncoding: () =>
    `Optional. \`${REASON_ENCODING}\` says that \`X-Service-Reason\` is percent-encoded UTF-8 (RFC 3986, as \`encodeURIComponent\` writes it), so a reason in any script, with line breaks or surrounding spaces, crosses the hop unchanged: header values are bytes, and HTTP clients refuse or trim what they cannot send. Without this header the reason is taken literally. The MCP broker always encodes.`,
  ticketNumber: () =>
    'The ticket that motivates the read. Sent together with `X-Service-Ticket-System`, or neither is sent (400 otherwise). A tenant policy may require a ticket (403 when it is missing).',
  ticketSystem: (ticketSystem) =>
    `The ticketing product of \`X-Service-Ticket-Number\`: exactly one constant value is accepted, the configured \`TICKET_SYSTEM\` (this document shows the default, \`${ticketSystem}\`). Sent together with \`X-Service-Ticket-Number\`, or neither is sent.`,
  source: () =>
    [
      "Optional. Where the reason and the ticket came from, recorded in the read's audit item (`reason_source`, `ticket_source`): `reason=<source>`, then `, ticket=<source>` exactly when a ticket is sent. The MCP broker always sends it: `argument` when the value was the assistant's tool argument, `person` when the tool asked the person (an MCP elicitation form) and the value is their answer.",
      '`declined` or `cancelled` say that the person was asked for that value and declined, or dismissed the question: the request is then refused (403), audited, and nothing is read (the reason header may then be absent). Without this header the audit item records no source (`null`). A value outside this grammar, or a ticket source without a ticket (or a ticket without one), is a 400.',
    ].join(' '),
};

/** Headers of ours beyond the contract's three attribution headers: documented, marked, never required. */
const EXTENSION_HEADERS: ReadonlySet<AttributionKey> = new Set(['reasonEncoding', 'source']);

function attributionParameters(ticketSystem: string): JsonObject[] {
  const schema = jsonSchemaOf(attributionSchema(ticketSystem), 'input') as {
    properties: Record<AttributionKey, JsonObject>;
    required?: string[];
  };
  const required = new Set(schema.required ?? []);
  // The encoding header is not an attribution field: it says how the reason header is written; the
  // source header says where the attribution came from.
  const wire: Record<AttributionKey, JsonObject | undefined> = {
    ...schema.properties,
    reasonEncoding: jsonSchemaOf(z.literal(REASON_ENCODING), 'input'),
    source: {
      type: 'string',
      pattern: ATTRIBUTION_SOURCE_PATTERN.source,
      examples: [`reason=${ATTRIBUTION_SOURCES[0]}`, `reason=${ATTRIBUTION_SOURCES[0]}, ticket=${ATTRIBUTION_SOURCES[1]}`],
    },
  };
  return (Object.keys(ATTRIBUTION_HEADERS) as AttributionKey[]).map((key) => ({
    name: canonicalHeaderName(ATTRIBUTION_HEADERS[key]),
    in: 'header',
    required: required.has(key),
    description: ATTRIBUTION_DESCRIPTIONS[key](ticketSystem),
    schema: wire[key],
    ...(EXTENSION_HEADERS.has(key) ? { 'x-extension': true } : {}),
  }));
}

function queryParameters(): JsonObject[] {
  // Which parameters are required is read from ObservationsQuery's input side (transforms aside).
  const input = z.toJSONSchema(ObservationsQuery, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as {
    required?: string[];
  };
  const required = new Set(input.required ?? []);
  const wire = queryParameterSchemas();
  return (Object.keys(ObservationsQuery.shape) as QueryName[]).map((name) => ({
    name,
    in: 'query',
    required: required.has(name),
    description: wire[name].description,
    schema: wire[name].schema,
  }));
}

const NO_STORE_HEADER: JsonObject = {
  description: 'Always `no-store`: tenant data and failures are never cached by intermediaries.',
  required: true,
  schema: { type: 'string', const: 'no-store' },
};

function failureResponse(statusLines: string[]): JsonObject {
  return {
    description: [
      'Any failure: `text/plain; charset=utf-8`, one short sentence and the request id, never a stack trace or internal names. A failed read is never reported as a healthy empty result.',
      '',
      ...statusLines.map((line) => `- ${line}`),
    ].join('\n'),
    headers: {
      'Cache-Control': NO_STORE_HEADER,
      'WWW-Authenticate': {
        description:
          'Sent with 401: the bearer challenge (`Bearer`), naming the scope the operation requires, and, where the service answers a token that was sent and refused itself, `error="invalid_token"` with a short `error_description` (RFC 6750 §3.1; API Gateway\'s own 401s cannot tell a refused token from a missing one, and carry no error code); and with the 403 of a token without that scope (`error="insufficient_scope"`). On AWS, API Gateway may rename a function\'s `WWW-Authenticate` to `x-amzn-Remapped-WWW-Authenticate`; the body names the scope in either case.',
        schema: { type: 'string', pattern: '^Bearer( |$)' },
      },
      'Retry-After': {
        description: 'Sent with 503: seconds after which the client may retry.',
        schema: { type: 'integer', minimum: 0 },
      },
    },
    content: { 'text/plain': { schema: { type: 'string', minLength: 1 } } },
  };
}

function successResponse(description: string, schema: JsonObject, headers: Record<string, JsonObject> = {}): JsonObject {
  return {
    description,
    headers: { 'Cache-Control': NO_STORE_HEADER, ...headers },
    content: { 'application/json': { schema } },
  };
}

const STATUS_401 = `401 with \`WWW-Authenticate: Bearer\` (with \`scope="${DEFAULT_REQUIRED_SCOPE}"\`, the scope \`REQUIRED_SCOPE\` names, when one is required): the bearer token is missing, malformed, badly signed, of the wrong issuer or audience, expired, or uses \`alg: none\`.`;
const STATUS_403_SCOPE = `403 with \`WWW-Authenticate: Bearer resource_metadata="…", error="insufficient_scope", scope="${DEFAULT_REQUIRED_SCOPE}"\`: the token is valid but was not granted the scope \`REQUIRED_SCOPE\` (default \`${DEFAULT_REQUIRED_SCOPE}\`, read from the claim \`scope\`, or else \`scp\`, or the claim \`SCOPE_CLAIM\` names).`;
const STATUS_502 =
  '502 with `Retry-After`: DynamoDB (or what answered in its place) gave an answer that cannot be read, such as a page without items, with a status below 500; never read as an empty result.';
const STATUS_503 =
  "503 with `Retry-After`: DynamoDB is throttled, unavailable (a 5xx, whatever its body), or reset the connection after the SDK's bounded retries";
const STATUS_504 = '504: DynamoDB or another dependency timed out.';
const STATUS_500 = '500: anything unexpected.';

function inventoryOperation(): JsonObject {
  return {
    operationId: OPERATION_IDS.inventory,
    summary: "List the caller's endpoint inventory",
    description: [
      "The durable and connected endpoint (agent) records of the caller's tenant, offline ones included: a disconnected endpoint is not evidence that it was deleted. The tenant comes only from the verified token (the claim named by `TENANT_CLAIM`, default `tenant_id`).",
      '',
      'Evaluated at request time with the online grace `ONLINE_GRACE_SECONDS` (default 120):',
      '- `connection_state`: `connected` (connection record connected and `last_heartbeat` within the grace), `stale` (connection record connected but the heartbeat older than the grace or absent), `disconnected` (connection record disconnected), `never_connected` (no connection record);',
      '- `is_online` is true exactly when `connection_state` is `connected`;',
      '- an endpoint known only from its connection record is still listed; where both records carry a field the durable one wins, except `last_heartbeat`, where the newer wins;',
      '- optional fields are omitted when unknown (never `null`, never `""`); no undeclared property ever appears;',
      "- order: the store's sort-key order of the endpoints' records, which is `agent_id` ascending by Unicode code point (the UTF-8 bytes of the ids compared). The whole tenant is returned in one array, without pagination.",
      '',
      'Streamed: the array is sent as it is read, page by page, so its first bytes arrive long before a large tenant is read to the end. It is compressed for clients that accept it: brotli (`Content-Encoding: br`) when `Accept-Encoding` names `br` with a q-value at least that of `gzip` (`br, gzip` gives br, about a tenth smaller than gzip), gzip (`Content-Encoding: gzip`) when it accepts gzip (by name, or by `*`) and not br at least as much, and plain JSON otherwise; a client should send one of them (the list is about five times smaller).',
      '',
      'A failed read is a failure response, never `200 []`: a failure before the first byte has its status; a failure after it (the `200` already sent) breaks the transfer, and what arrived is never a valid array (JSON without its closing `]`, a brotli or gzip stream without its end): a client that parses the body gets an error, never a shorter list. An answer that would pass the 200 MB a streamed response may carry breaks the same way, before that byte (with realistic endpoints, about 570,000 uncompressed and about 3 million with gzip; see docs/performance.md). Stored records that cannot be read are left out; a streamed answer cannot say so in a header (they are known only at its end), so the service logs them and counts them in its `UnreadableRecords` metric.',
    ].join('\n'),
    security: [{ [BEARER_SCHEME]: [] }],
    responses: {
      '200': successResponse("The caller's whole tenant, one AgentSummary per endpoint, streamed.", componentRef('AgentInventory')),
      default: failureResponse([
        STATUS_401,
        STATUS_403_SCOPE,
        '403: the token is valid but carries no tenant claim (never a default tenant).',
        STATUS_502,
        `${STATUS_503}.`,
        STATUS_504,
        STATUS_500,
      ]),
    },
  };
}

function observationsOperation(ticketSystem: string): JsonObject {
  const { minutes, limit } = OBSERVATION_BOUNDS;
  return {
    operationId: OPERATION_IDS.observations,
    summary: 'Read the curated observations dashboard of one endpoint (internal)',
    description: [
      "Internal: reached only privately by the MCP broker (the MCP service), on behalf of a user, through a VPC-only private API that admits only the broker's VPC endpoint; it is never reachable at the public API host, where this path answers 404. External clients call the MCP tool `observations` through `tools/call` on `/api/mcp`. The broker sends a bearer token for the user that it obtained by an RFC 8693 token exchange: its audience is this service (`OBSERVATIONS_AUDIENCE`, different from the inventory and MCP audiences), `sub` is the user, the tenant claim is the user's, and the broker is named in the claim `BROKER_CLAIM` (default `act.sub`, the actor), which must be on the allow-list. A user's own token passed through names no broker and is refused (403). Broker identity, attribution, audit and ticket policy stay authoritative.",
      '',
      'Every authenticated request writes an audit item (request id, time, tenant, subject, broker, agent_id, reason, ticket, where the reason and the ticket came from, minutes, limit, outcome); a successful read returns data only after its audit item is written. A repeated query parameter or attribution header is a 400, never a guess.',
      '',
      "Headers marked `x-extension` are ours, not the contract's: a caller may leave them out, and the contract's three attribution headers keep their rules whether they are sent or not.",
      '',
      `Meaning of the dashboard (query defaults \`minutes=${minutes.default}\`, \`limit=${limit.default}\`):`,
      '- `schema` is `endpoint-dashboard/v1`; `window_minutes` is the minutes used; `evaluated_at` is the evaluation time;',
      '- `cpu`, `memory`, `disk` and metric `value`s are percent used, 0 to 100; a nullable value is not zero: `null` means not reported, and a missing observation is `unknown`, never healthy;',
      '- `observed_at`: time of the newest sample in the window, else `null`; `expires_at`: `observed_at` plus `OBSERVATION_TTL_SECONDS` (default 600), else `null`;',
      '- `metrics`: exactly three, in this order: `cpu` ("CPU usage"), `memory` ("Memory usage"), `disk` ("Disk usage"), valued from the newest sample in the window; a `null` value has status `unknown`; `detail` states the value and the thresholds. `metrics` is `null` only when the endpoint never reported a sample within retention (8 days); when samples exist but none in the window, the three metrics are present with `value: null` and status `unknown`;',
      '- `history`: the samples in the window, oldest first, at most `limit` of them (see `limit`); `[]` when the window holds no sample; `null` exactly when `metrics` is `null`;',
      '- statuses everywhere are `ok`, `warning`, `critical` or `unknown`, ranked critical > warning > unknown > ok. Default thresholds for all three metrics: warning at 85 or more, critical at 95 or more (a tenant policy may override them);',
      '- `findings` (never `null` in practice): one per problem, sorted by status rank then scope: the endpoint is not connected (scope `connectivity`: `warning` when `disconnected` or `stale`, `unknown` when `never_connected`); no sample in the window, or never any (scope `observation`, `unknown`); the newest sample expired at evaluation time (scope `observation`, `unknown`); stored samples that could not be read, with their count (scope `observation`, `unknown`: they are left out of `metrics` and `history`, and an endpoint whose samples all cannot be read is never called never-reported); each metric at warning or critical (scope `metric`, its status); each metric not reported (scope `metric`, `unknown`). `[]` when nothing is wrong;',
      '- `status`: the worst of all metric and finding statuses, `ok` when there is nothing worse;',
      '- `policy_description`: the thresholds, units, TTL and online grace in force, in plain words;',
      '- `endpoint`: `id`, `hostname`, `os`, `client_name` (`null` when unknown), `last_heartbeat` (`null` when none).',
      '',
      'A failed read (provider, transport or audit) is a failure response, never an empty dashboard.',
    ].join('\n'),
    'x-internal': true,
    servers: [
      {
        url: '{private_base_url}',
        description:
          'The private, VPC-only REST API the MCP broker calls through its execute-api VPC endpoint (its execute-api URL with the stage); never the public host.',
        variables: { private_base_url: { default: 'https://private-api-id.execute-api.us-east-1.amazonaws.com/prod' } },
      },
    ],
    security: [{ [BEARER_SCHEME]: [] }],
    parameters: [...queryParameters(), ...attributionParameters(ticketSystem)],
    responses: {
      '200': successResponse('The curated dashboard of the endpoint.', componentRef('EndpointDashboard')),
      default: failureResponse([
        '400: a query parameter or attribution header is invalid (bounds, pattern, the ticket pair rule, the ticket-system constant, the grammar of `X-Service-Attribution-Source`) or repeated.',
        STATUS_401,
        `403: the token is valid but carries no tenant claim; it names no broker (a user's token passed through) or a broker not on the allow-list; it was not granted the scope \`${OBSERVATIONS_SCOPE}\` (\`WWW-Authenticate: Bearer error="insufficient_scope", scope="${OBSERVATIONS_SCOPE}"\`; required whenever \`REQUIRED_SCOPE\` is set, and asked for by the broker in its token exchange); the tenant policy requires a ticket and none was sent; or \`X-Service-Attribution-Source\` says the person declined (or dismissed) the question for a value (nothing is read).`,
        "404: the agent is not in the caller's tenant (unknown or another tenant's: the same answer); or this path was asked at the public host.",
        STATUS_502,
        `${STATUS_503}, or the audit write failed.`,
        STATUS_504,
        STATUS_500,
      ]),
    },
  };
}

export interface OpenApiOptions {
  /** The ticket-system constant to document; defaults to the configuration default, never the environment. */
  ticketSystem?: string;
}

/**
 * Builds the OpenAPI 3.1 document. Pure and deterministic: the same code gives the same document
 * (key order is construction order; nothing reads the environment, the clock or randomness), so
 * the committed `openapi.json` can be compared byte for byte with a fresh build.
 */
export function buildOpenApiDocument(options: OpenApiOptions = {}): JsonObject {
  const ticketSystem = options.ticketSystem ?? DEFAULT_TICKET_SYSTEM;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Endpoint Inventory and Observations Read Service',
      version: CONTRACT_VERSION,
      description: [
        "A read-only interface with exactly two operations: the endpoint (agent) inventory of the caller's tenant, and the curated observations dashboard of one endpoint (internal, reached only by the MCP broker). Reading this contract grants neither access nor approval to act on an endpoint.",
        '',
        'Three rules hold everywhere: a missing observation is **unknown**, never healthy; a nullable value is **not zero** (absent data is `null`, never `0`, `""` or `[]`); a failed read is **never a healthy empty result** (a provider, transport or audit failure is a failure response, never `200 []` or an empty dashboard).',
        '',
        'Paths already contain the `/api` prefix. Every object rejects undeclared properties; timestamps are RFC 3339 date-times.',
        '',
        `Scope: the public operations (this inventory, and the MCP door \`POST /api/mcp\` that brokers the observations read) ask for one OAuth scope, \`REQUIRED_SCOPE\` (default \`${DEFAULT_REQUIRED_SCOPE}\`); their RFC 9728 documents list it in \`scopes_supported\`, every 401 names it, and a valid token without it is a 403 \`insufficient_scope\`. The observations operation asks for \`${OBSERVATIONS_SCOPE}\` on the broker's exchanged token.`,
        '',
        'Limits: API Gateway refuses a request body over 10 MB (10,485,760 bytes) with its own `413` (`HTTP content length exceeded 10485760 bytes.`), and Lambda an invocation whose event passes 6 MB (6,291,456 bytes) with API Gateway\'s `413` `{"message": "Request Too Long"}`; neither can be worded by the service. The MCP door reads at most 128 KiB (131,072 bytes) of body, nested at most 32 deep, before it parses anything: a larger body is a `413` and a deeper one a JSON-RPC parse error (`-32700`, `400`), each one sentence (docs/mcp.md).',
        '',
        'Generated from the zod wire types in `lib/contract` by `npm run openapi`; never edited by hand.',
      ].join('\n'),
    },
    servers: [
      {
        url: '{base_url}',
        description: "The public API host: its custom domain, or the public REST API's execute-api URL with the stage (`PUBLIC_URL`).",
        variables: { base_url: { default: 'https://api.example.com' } },
      },
    ],
    paths: {
      [INVENTORY_PATH]: { get: inventoryOperation() },
      [OBSERVATIONS_PATH]: { get: observationsOperation(ticketSystem) },
    },
    components: {
      securitySchemes: {
        [BEARER_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: `A JWT in \`Authorization: Bearer <token>\`, required on both operations. Issuer and audience come from configuration, the signing keys from the \`jwks_uri\` of the issuer's discovery document (OpenID Connect's, else RFC 8414's; \`JWKS_URL\` overrides it); the caller is \`sub\` and the tenant the claim named by \`TENANT_CLAIM\` (default \`tenant_id\`). The token must grant the operation's scope (\`${DEFAULT_REQUIRED_SCOPE}\` by default for the inventory, \`${OBSERVATIONS_SCOPE}\` for observations) in \`scope\` (space-separated) or \`scp\` (a string or an array). Inventory tokens are verified by the token authorizer of the public API (RSA keys, \`kid\`, exact \`iss\`, \`aud\` or else \`client_id\`, \`exp\`, \`nbf\`, \`iat\`), and a refused one is a 401 whose \`WWW-Authenticate\` names the RFC 9728 document of the inventory (\`resource_metadata\`); observations tokens are issued to the broker for the user by an RFC 8693 token exchange, with the observations audience and the broker as actor (\`act.sub\`), and verified by the service itself.`,
        },
      },
      schemas: componentSchemas(),
    },
  };
}

/** The document as written to `openapi.json`: two-space JSON with a trailing newline. */
export function renderOpenApiDocument(document: JsonObject = buildOpenApiDocument()): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
