import type { RestRequest } from '../lib/rest-request.js';

/**
 * The gateway's event read into a plain request (lib/rest-request.ts), once, by each handler: the
 * one place that knows the shape of a payload 1.0 event, as API Gateway's proxy integration and a
 * REQUEST authorizer give it. lib/ sees the request, never the event.
 */

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

/** The request an event carries, read once (lib/rest-request.ts RestRequest). */
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
