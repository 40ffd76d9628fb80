import type { MiddlewareObj } from '@middy/core';
import httpCors, { type Options as HttpCorsOptions } from '@middy/http-cors';

/**
 * Cross-origin access by a list of admitted origins, for a function's chain: @middy/http-cors
 * writing the headers of every answer (the failures the failure handler writes too, when this
 * middleware is registered before it), `Access-Control-Allow-Origin` naming an admitted origin
 * only (never `*`), and `Vary: Origin`, since the headers depend on it. Generic over the event:
 * middy hands it the Lambda event, which it reads for `Origin`; the rules are plain values.
 */

/** Which origins a function admits, and what their pages may send and read. */
export interface AdmittedOriginsCors {
  isAllowed(origin: string | undefined): boolean;
  methods: readonly string[];
  headers: readonly string[];
  exposeHeaders: readonly string[];
  maxAgeSeconds: number;
}

export function admittedOriginsCors(rules: AdmittedOriginsCors): MiddlewareObj {
  // `vary` is an option of @middy/http-cors that its type declarations leave out.
  const options: HttpCorsOptions & { vary: string } = {
    // Null: no header.
    getOrigin: (incoming) => (rules.isAllowed(incoming) ? incoming : (null as unknown as string)),
    methods: rules.methods.join(', '),
    headers: rules.headers.join(', '),
    exposeHeaders: rules.exposeHeaders.join(', '),
    maxAge: rules.maxAgeSeconds,
    vary: 'Origin',
  };
  return httpCors(options) as MiddlewareObj;
}
