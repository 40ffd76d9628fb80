/**
 * The public REST API's static answers: the RFC 9728 documents of both doors and the CORS
 * preflights of the MCP door and of those documents. They are the same for every caller of a
 * stage (only the request's `Origin` chooses among a few fixed forms), so API Gateway answers them
 * itself with MOCK integrations: no function runs for them, none in the VPC, and a flood of them
 * takes nothing from the MCP door's reserved instances.
 *
 * One builder, used twice, so the two cannot drift:
 * - `npm run package`: infra/osls-public-api-stage.mjs has infra/package-resources-cli.ts write
 *   these methods into the template with the stage's values, read (lib/config.ts
 *   STATIC_ANSWERS_CONFIG) from the environments the template gives the functions behind the doors;
 * - the local gateway answers these routes by running the same MOCK integration
 *   (local/mock-integration.ts: its request template, its integration response's headers and
 *   template), made with the local stack's values by infra/public-api-answers-cli.ts in a process
 *   of its own (local/public-api-answers.ts).
 *
 * The answers are what the MCP function answered for these routes, byte for byte: the documents
 * from lib/mcp/resource-metadata.ts, the headers @middy/http-cors wrote (lib/mcp/cors.ts
 * MCP_CORS_HEADERS), `Access-Control-Allow-Origin` for an admitted origin only, and at
 * `OPTIONS /api/mcp` the 403 failure (lib/responses.ts failureBody with API Gateway's request id)
 * for a page of any other origin. The templates keep all their directives on one line, before the
 * body, so that no engine's handling of a directive's line break can add a byte; the body is
 * Velocity's unparsed content (`#[[…]]#`), so no `$` or `#` in a URL is ever read as VTL.
 */
import { DOORS } from '../lib/auth/public-doors.js';
import type { StaticAnswersConfig } from '../lib/config.js';
import { admittedOrigins, FOREIGN_ORIGIN_REFUSAL, MCP_CORS_HEADERS, MCP_METHODS } from '../lib/mcp/cors.js';
import { METADATA_HEADERS, metadataDocument, metadataDoorOf, RESOURCE_METADATA_PATHS } from '../lib/mcp/resource-metadata.js';
import { FAILURE_HEADERS, failureBody } from '../lib/responses.js';

/** What the static answers are made from: the stage's values, as lib/config.ts reads them (STATIC_ANSWERS_CONFIG). */
export type StaticAnswerValues = StaticAnswersConfig;

/** One method of a MOCK integration, as `AWS::ApiGateway::Method` properties (without RestApiId and ResourceId). */
export interface MockMethod {
  HttpMethod: 'GET' | 'OPTIONS';
  AuthorizationType: 'NONE';
  ApiKeyRequired: false;
  Integration: {
    Type: 'MOCK';
    PassthroughBehavior: 'WHEN_NO_MATCH';
    RequestTemplates: Record<string, string>;
    IntegrationResponses: Array<{
      StatusCode: string;
      ResponseParameters: Record<string, string>;
      ResponseTemplates: Record<string, string>;
    }>;
  };
  MethodResponses: Array<{ StatusCode: string; ResponseParameters: Record<string, boolean> }>;
}

/** A static route: its path, its method, and how API Gateway answers it. */
export interface StaticAnswer {
  path: string;
  method: MockMethod;
}

/** The routes answered statically: each RFC 9728 document (GET and its preflight), and the MCP door's preflight. */
export const STATIC_ROUTES: readonly { method: 'GET' | 'OPTIONS'; path: string }[] = Object.freeze([
  ...RESOURCE_METADATA_PATHS.flatMap((path) => [
    { method: 'GET' as const, path },
    { method: 'OPTIONS' as const, path },
  ]),
  { method: 'OPTIONS' as const, path: DOORS.mcp.resource },
]);

/** A VTL string literal (single quotes: no interpolation); the values written here never hold a quote. */
function vtlString(value: string): string {
  if (value.includes("'")) throw new Error(`a static answer cannot quote ${JSON.stringify(value)} in VTL`);
  return `'${value}'`;
}

/**
 * VTL that sets `$origin` to the request's `Origin` (empty when none), and `$admitted` to whether
 * the service admits it, naming it in `Access-Control-Allow-Origin` then.
 */
function allowOriginVtl(values: StaticAnswerValues): string {
  const admitted = admittedOrigins(values)
    .map((origin) => `$origin == ${vtlString(origin)}`)
    .join(' || ');
  return `#set($origin = $input.params('Origin'))#set($admitted = false)#if(${admitted})#set($admitted = true)#set($context.responseOverride.header.Access-Control-Allow-Origin = $origin)#end`;
}

/** Velocity's unparsed content: the exact bytes of `body`, never read as VTL. */
function literal(body: string): string {
  if (body.includes(']]#')) throw new Error('a static answer body cannot hold "]]#"');
  return body === '' ? '' : `#[[${body}]]#`;
}

/** Text written as it is, where it holds nothing VTL reads (velocityjs cannot parse unparsed content right after a reference). */
function plainText(text: string): string {
  if (/[$#\\]/.test(text)) throw new Error(`a static answer cannot write ${JSON.stringify(text)} as plain VTL text`);
  return text;
}

/** Static header values as API Gateway's response parameters (`method.response.header.X` = `'value'`). */
function staticHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, vtlString(value)]));
}

/** The method responses a MOCK method declares: the status codes it answers, each with every header it may set. */
function methodResponses(statuses: readonly string[], headers: readonly string[]): MockMethod['MethodResponses'] {
  const declared = Object.fromEntries(headers.map((name) => [`method.response.header.${name}`, false]));
  return statuses.map((status) => ({ StatusCode: status, ResponseParameters: declared }));
}

/** A MOCK method that answers `status` with these static headers and the template `vtl`. */
function mockMethod(
  httpMethod: MockMethod['HttpMethod'],
  status: string,
  headers: Readonly<Record<string, string>>,
  vtl: string,
  also: { statuses?: readonly string[]; headers?: readonly string[] } = {},
): MockMethod {
  return {
    HttpMethod: httpMethod,
    AuthorizationType: 'NONE',
    ApiKeyRequired: false,
    Integration: {
      Type: 'MOCK',
      PassthroughBehavior: 'WHEN_NO_MATCH',
      RequestTemplates: { 'application/json': `{"statusCode": ${status}}` },
      IntegrationResponses: [
        { StatusCode: status, ResponseParameters: staticHeaders(headers), ResponseTemplates: { 'application/json': vtl } },
      ],
    },
    MethodResponses: methodResponses(
      [status, ...(also.statuses ?? [])],
      [...Object.keys(headers), 'Access-Control-Allow-Origin', ...(also.headers ?? [])],
    ),
  };
}

/**
 * The MCP door's preflight: without an `Origin` a 204 naming the methods (`Allow`); from an
 * admitted origin a 204 that lets it send the MCP request; from any other a 403 in the contract's
 * failure form, so the browser refuses to send.
 */
function mcpPreflight(values: StaticAnswerValues): MockMethod {
  const refused = failureBody(FOREIGN_ORIGIN_REFUSAL, '$context.requestId');
  const [sentence] = refused.split('$context.requestId');
  const vtl = [
    allowOriginVtl(values),
    `#if($origin == '')#set($context.responseOverride.header.Allow = ${vtlString(['OPTIONS', ...MCP_METHODS].join(', '))})`,
    '#elseif(!$admitted)#set($context.responseOverride.status = 403)',
    `#set($context.responseOverride.header.Content-Type = ${vtlString(FAILURE_HEADERS['Content-Type'])})`,
    // The sentence is fixed text, the request id API Gateway's own: the body of lib/responses.ts failureBody.
    `${literal(sentence ?? '')}$context.requestId${plainText(refused.slice((sentence ?? '').length + '$context.requestId'.length))}`,
    '#end',
  ].join('');
  return mockMethod('OPTIONS', '204', { 'Cache-Control': 'no-store', ...MCP_CORS_HEADERS }, vtl, {
    statuses: ['403'],
    headers: ['Allow', 'Content-Type'],
  });
}

/** Every static answer of the public REST API, with a stage's values. */
export function staticAnswers(values: StaticAnswerValues): StaticAnswer[] {
  return STATIC_ROUTES.map(({ method, path }) => {
    const door = metadataDoorOf(path);
    if (door === undefined) return { path, method: mcpPreflight(values) };
    if (method === 'OPTIONS') {
      return { path, method: mockMethod('OPTIONS', '204', { 'Cache-Control': 'no-store', ...MCP_CORS_HEADERS }, allowOriginVtl(values)) };
    }
    const vtl = `${allowOriginVtl(values)}${literal(metadataDocument(values, door))}`;
    return { path, method: mockMethod('GET', '200', { ...METADATA_HEADERS, ...MCP_CORS_HEADERS }, vtl) };
  });
}

/** The static answer of one route, or undefined when it is not one of STATIC_ROUTES. */
export function staticAnswerOf(method: string, path: string, values: StaticAnswerValues): MockMethod | undefined {
  return staticAnswers(values).find((answer) => answer.path === path && answer.method.HttpMethod === method)?.method;
}

/** `/.well-known/oauth-protected-resource` → `WellKnownOauthProtectedResource`. */
function pathWords(path: string): string {
  return path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** Logical id of the static method at `path` in the template. */
export function staticMethodLogicalId(method: string, path: string): string {
  return `PublicApiStatic${method.charAt(0)}${method.slice(1).toLowerCase()}${pathWords(path)}`;
}

/**
 * The static answers as template resources of the public REST API (osls names it
 * ApiGatewayRestApi): one `AWS::ApiGateway::Method` per route, and the `AWS::ApiGateway::Resource`
 * of every path segment the API does not have yet. `existing` maps the paths osls made resources
 * for (from the `http` events) to their logical ids; the root is the API's own.
 */
export function staticAnswerResources(values: StaticAnswerValues, existing: Readonly<Record<string, string>>): Record<string, unknown> {
  const resources: Record<string, unknown> = {};
  const resourceIds = new Map(Object.entries(existing));
  const resourceOf = (path: string): unknown => {
    if (path === '') return { 'Fn::GetAtt': ['ApiGatewayRestApi', 'RootResourceId'] };
    const known = resourceIds.get(path);
    if (known) return { Ref: known };
    const id = `PublicApiResource${pathWords(path)}`;
    resourceIds.set(path, id);
    const cut = path.lastIndexOf('/');
    resources[id] = {
      Type: 'AWS::ApiGateway::Resource',
      Properties: { RestApiId: { Ref: 'ApiGatewayRestApi' }, ParentId: resourceOf(path.slice(0, cut)), PathPart: path.slice(cut + 1) },
    };
    return { Ref: id };
  };
  for (const { path, method } of staticAnswers(values)) {
    resources[staticMethodLogicalId(method.HttpMethod, path)] = {
      Type: 'AWS::ApiGateway::Method',
      Properties: { RestApiId: { Ref: 'ApiGatewayRestApi' }, ResourceId: resourceOf(path), ...method },
    };
  }
  return resources;
}
