/**
 * The stack's own refusals (a request target that is no path, a method its own routes do not
 * serve, a sign-in form from another page…), in the form every failure of the service takes
 * (docs/design.md §6, the gateway responses of infra/gateway-responses.ts): `text/plain`, one
 * sentence and the request id, never cached. The service's form (lib/responses.ts), copied:
 * test/unit/boundary-copies.test.ts holds the two equal.
 */

/** The headers of every failure: text, never cached. */
export const FAILURE_HEADERS = Object.freeze({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });

/** The body of a failure: one sentence and the request id the client can quote. */
export function failureText(sentence: string, requestId: string): string {
  return `${sentence} (request id: ${requestId})\n`;
}

const FAILURE_TEXT = /^(.+?) \(request id: ([^)\s]+)\)\s*$/s;

/** The sentence of a body failureText wrote, or undefined for any other text. */
export function sentenceOf(body: string): string | undefined {
  return FAILURE_TEXT.exec(body)?.[1];
}

/** A refusal by one of the stack's own routes: the listener answers it (status, sentence, headers). */
export class LocalRefusal extends Error {
  override name = 'LocalRefusal';
  constructor(
    readonly statusCode: 400 | 403 | 404 | 405 | 413 | 503,
    sentence: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(sentence);
  }
}
