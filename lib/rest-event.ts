import type { APIGatewayProxyEvent } from 'aws-lambda';
import { httpError } from './errors.js';

/**
 * Reading a REST API payload-1.0 event without guessing: every value of a header (case-insensitive)
 * or query parameter is looked at, and more than one is a 400 rather than a silent pick.
 */
export function headerValues(event: APIGatewayProxyEvent, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  const multi = event.multiValueHeaders ?? {};
  for (const [key, list] of Object.entries(multi)) {
    if (key.toLowerCase() === wanted && list) values.push(...list);
  }
  if (values.length === 0) {
    for (const [key, value] of Object.entries(event.headers ?? {})) {
      if (key.toLowerCase() === wanted && value !== undefined) values.push(value);
    }
  }
  return values;
}

/** The single value of a header, undefined when absent; 400 when repeated. */
export function singleHeader(event: APIGatewayProxyEvent, name: string, display: string): string | undefined {
  const values = headerValues(event, name);
  if (values.length > 1) throw httpError(400, `The ${display} header was sent more than once.`);
  return values[0];
}

/** A map's own value for a name a client chose (`toString` is a name, not an inherited method). */
function own<T>(map: Record<string, T | undefined>, name: string): T | undefined {
  return Object.hasOwn(map, name) ? map[name] : undefined;
}

/** Every query parameter with its single value; 400 when any is repeated. */
export function singleQueryValues(event: APIGatewayProxyEvent): Record<string, string> {
  const multi = event.multiValueQueryStringParameters ?? {};
  const single = event.queryStringParameters ?? {};
  const result = Object.create(null) as Record<string, string>;
  for (const name of new Set([...Object.keys(multi), ...Object.keys(single)])) {
    const one = own(single, name);
    const values = own(multi, name) ?? (one !== undefined ? [one] : []);
    if (values.length > 1) throw httpError(400, `The query parameter ${name} was sent more than once.`);
    if (values[0] !== undefined) result[name] = values[0];
  }
  return result;
}
