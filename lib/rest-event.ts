import { httpError } from './errors.js';

/**
 * A REST API request (payload 1.0, as API Gateway's proxy integration and a REQUEST authorizer
 * get it), read from its event once: every value of every header and query parameter is kept, so
 * that a repeated one is a 400 where it matters rather than a silent pick, and nothing after this
 * reads the event's shape.
 */
export interface RestRequest {
  /** The HTTP method, in upper case. */
  method: string;
  /** The route's resource (`/api/mcp`), not the path: a custom domain's base path may stand before it. */
  resource: string;
  path: string;
  /** The host the client called (API Gateway always names it; a reserved name stands in for an event without one). */
  host: string;
  /** Every value of every header, by lower-case name, in the order sent. */
  headers: ReadonlyMap<string, readonly string[]>;
  /** Every value of every query parameter, by name. */
  query: ReadonlyMap<string, readonly string[]>;
  /** The body as the event carries it: UTF-8 text, or base64 when `isBase64Encoded` (never decoded here). */
  body: string;
  isBase64Encoded: boolean;
  /** API Gateway's request id, which its access log names; null without one. */
  apiRequestId: string | null;
  /** What the token authorizer handed over (`requestContext.authorizer`); null behind no authorizer. */
  authorizer: Readonly<Record<string, unknown>> | null;
}

/** The parts of a payload 1.0 event this reads: a proxy integration's event, or a REQUEST authorizer's. */
export interface RestEvent {
  httpMethod: string;
  resource: string;
  path: string;
  headers?: Readonly<Record<string, string | undefined>> | null;
  multiValueHeaders?: Readonly<Record<string, readonly string[] | undefined>> | null;
  queryStringParameters?: Readonly<Record<string, string | undefined>> | null;
  multiValueQueryStringParameters?: Readonly<Record<string, readonly string[] | undefined>> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
  requestContext?: { domainName?: string; requestId?: string; authorizer?: unknown } | null;
}

/**
 * Every value of every name of a payload 1.0 map pair: the multi-value map's lists, and the
 * single-value map's value for a name the other lacks. `fold` gives the name its key (headers are
 * case-insensitive; query parameters are not).
 */
function allValues(
  multi: Readonly<Record<string, readonly string[] | undefined>> | null | undefined,
  single: Readonly<Record<string, string | undefined>> | null | undefined,
  fold: (name: string) => string,
): Map<string, string[]> {
  const values = new Map<string, string[]>();
  const add = (name: string, more: readonly string[]): void => {
    const key = fold(name);
    values.set(key, [...(values.get(key) ?? []), ...more]);
  };
  for (const [name, list] of Object.entries(multi ?? {})) if (list && list.length > 0) add(name, list);
  for (const [name, value] of Object.entries(single ?? {})) if (value !== undefined && !values.has(fold(name))) add(name, [value]);
  return values;
}

/** The request an event carries, read once (see RestRequest). */
export function restRequest(event: RestEvent): RestRequest {
  const context = event.requestContext ?? {};
  const authorizer = context.authorizer;
  return {
    method: event.httpMethod.toUpperCase(),
    resource: event.resource,
    path: event.path,
    host: context.domainName || 'host.invalid',
    headers: allValues(event.multiValueHeaders, event.headers, (name) => name.toLowerCase()),
    query: allValues(event.multiValueQueryStringParameters, event.queryStringParameters, (name) => name),
    body: event.body ?? '',
    isBase64Encoded: event.isBase64Encoded === true,
    apiRequestId: typeof context.requestId === 'string' && context.requestId !== '' ? context.requestId : null,
    authorizer: authorizer !== null && typeof authorizer === 'object' ? (authorizer as Record<string, unknown>) : null,
  };
}

/** Every value of a header (its name in any case); none when absent. */
export function headerValues(request: Pick<RestRequest, 'headers'>, name: string): readonly string[] {
  return request.headers.get(name.toLowerCase()) ?? [];
}

/** The single value of a header, undefined when absent; 400 when repeated. */
export function singleHeader(request: Pick<RestRequest, 'headers'>, name: string, display: string): string | undefined {
  const values = headerValues(request, name);
  if (values.length > 1) throw httpError(400, `The ${display} header was sent more than once.`);
  return values[0];
}

/** Every query parameter with its single value; 400 when any is repeated. */
export function singleQueryValues(request: Pick<RestRequest, 'query'>): Record<string, string> {
  const result = Object.create(null) as Record<string, string>;
  for (const [name, values] of request.query) {
    if (values.length > 1) throw httpError(400, `The query parameter ${name} was sent more than once.`);
    if (values[0] !== undefined) result[name] = values[0];
  }
  return result;
}
