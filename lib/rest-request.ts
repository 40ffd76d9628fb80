import { httpError } from './errors.js';

/**
 * A REST API request as plain values: what the handlers read from the gateway's event (payload
 * 1.0, functions/rest-event.ts) before anything of lib/ sees it. Every value of every header and
 * query parameter is kept, so that a repeated one is a 400 where it matters rather than a silent
 * pick; nothing in lib/ reads the event's shape.
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
