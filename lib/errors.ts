import { createError, HttpError } from '@middy/util';
import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';

export { HttpError };

/**
 * The one error model: every failure a client may see is middy's own HttpError, the error
 * @middy/http-error-handler reads, made by its createError: a status, one short sentence
 * (`message`, sent as text/plain by lib/middleware/failures.ts), `expose`, the headers the answer
 * carries and the `cause`. Anything else becomes a 500 with INTERNAL_ERROR, so internals never
 * reach a client.
 *
 * Two things middy's createError leaves to its caller: `expose` is true here for every status
 * (each sentence is written for the client, a 503's included, where middy hides every 5xx), and
 * the headers are set on the error after it is made (createError hands its properties to Error's
 * constructor, which keeps only `cause`).
 */
export function httpError(
  statusCode: number,
  sentence: string,
  options: { cause?: unknown; headers?: Record<string, string> } = {},
): HttpError {
  const error = createError(statusCode, sentence, options.cause === undefined ? { expose: true } : { cause: options.cause, expose: true });
  error.headers = { ...options.headers };
  return error;
}

/**
 * 401: no usable bearer token, with the challenge clients expect: a bare `Bearer` unless the
 * caller gives the door's own (lib/auth/challenge.ts, bearerChallenge).
 */
export function unauthorized(sentence: string, cause?: unknown, challenge = 'Bearer'): HttpError {
  return httpError(401, sentence, { cause, headers: { 'WWW-Authenticate': challenge } });
}

/** 502 or 503: a dependency failed in a way that may pass; `Retry-After` says when to try again. */
export function retryLater(statusCode: 502 | 503, sentence: string, cause?: unknown, retryAfterSeconds = 5): HttpError {
  return httpError(statusCode, sentence, { cause, headers: { 'Retry-After': String(retryAfterSeconds) } });
}

/** The sentence of every failure nobody mapped: a 500 says no more than this. */
export const INTERNAL_ERROR = 'The request could not be completed because of an internal error.';

/** The status a client gets for `error`: its own when it is an HttpError it may see, else 500. */
export function httpStatusOf(error: unknown): number {
  return error instanceof HttpError && error.expose ? error.statusCode : 500;
}

/** `error` as the failure a client gets: itself when it is an HttpError it may see, else the 500 of INTERNAL_ERROR, which keeps it as its cause. */
export function clientFailure(error: unknown): HttpError {
  return error instanceof HttpError && error.expose ? error : httpError(500, INTERNAL_ERROR, { cause: error });
}

/**
 * Thrown by the store when DynamoDB (or whatever answers in its place) gives an answer that is not
 * a DynamoDB answer: a Query without `Items`, an item that is not an object. dependencyFailure
 * makes it a 502; it must never be read as an empty page.
 */
export class UnreadableStoreAnswerError extends Error {
  override name = 'UnreadableStoreAnswerError';
}

/**
 * Socket failures the SDK's classification does not name (it leaves them unretried), which still
 * mean the store cannot be reached: kept here so they are a 503, not a 500.
 */
const MORE_NETWORK_CODES = new Set(['ECONNABORTED', 'EHOSTDOWN', 'ENETDOWN']);
/**
 * What says "no answer in time" rather than "no answer": the SDK's classification calls both
 * transient, and a 504 must not be told from a 503 by it (the SDK also names a reset connection a
 * `TimeoutError`, so a connection failure anywhere in the chain is checked first).
 */
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT']);
const TIMEOUT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'AbortError']);

/** One error of a cause chain, as the SDK's classification reads it. */
type ErrorLink = Parameters<typeof isTransientError>[0] & { code?: unknown; cause?: unknown };

/** The error and its causes, outermost first (a bounded walk: cause chains may loop). */
function causeChain(error: unknown): ErrorLink[] {
  const chain: ErrorLink[] = [];
  let current: unknown = error;
  while (current !== null && typeof current === 'object' && chain.length < 8 && !chain.includes(current as ErrorLink)) {
    chain.push(current as ErrorLink);
    current = (current as ErrorLink).cause;
  }
  return chain;
}

const codeOf = (link: ErrorLink): string => (typeof link.code === 'string' ? link.code : '');
const nameOf = (link: ErrorLink): string => (typeof link.name === 'string' ? link.name : '');

/** A refused, reset or closed connection, or an unreachable host: the SDK's transient errors that are not timeouts. */
function isConnectionFailure(link: ErrorLink): boolean {
  const code = codeOf(link);
  if (code === '' || TIMEOUT_CODES.has(code)) return false;
  // The SDK's transient check with nothing but the code: true exactly for its network error codes.
  return MORE_NETWORK_CODES.has(code) || isTransientError({ name: '', message: '', code } as ErrorLink);
}

/**
 * What the SDK retries or calls a server error, once connection failures and timeouts are told
 * apart: throttling (429 or a throttling name), a 5xx, a retryable trait, an exception the service
 * model marks as the server's fault (`$fault: 'server'`, DynamoDB's InternalServerError). Also a missing table (the
 * deployment is incomplete: unavailable, not a bug of the request), and DynamoDB leaving keys
 * unprocessed past our retries (lib/store/batch-get.ts: it throttles a batch that way).
 */
function isStoreUnavailable(link: ErrorLink): boolean {
  return (
    isThrottlingError(link) ||
    isTransientError(link) ||
    isServerError(link) ||
    (link as { $fault?: unknown }).$fault === 'server' ||
    // By name, not by class: importing DynamoDB's exception classes would put its client into every bundle that maps errors (the authorizer's).
    nameOf(link) === 'ResourceNotFoundException' ||
    nameOf(link) === 'UnprocessedKeysError'
  );
}

/**
 * Maps a failed DynamoDB call to the failure a client sees, with the SDK's own service-error
 * classification (@smithy/core/retry: throttling, transient and server errors) for what it knows,
 * and the 503/504 split it does not make. In order:
 * - a refused, reset or closed connection, or an unreachable host, anywhere in the cause chain:
 *   503 with Retry-After (the SDK names a reset a `TimeoutError`, but nothing timed out);
 * - an answer that cannot be read (UnreadableStoreAnswerError, or a body the SDK could not parse):
 *   502 with Retry-After, unless its HTTP status was a 5xx: then the store said it is unavailable
 *   (a load balancer's HTML page for a 503), and that is the 503 with Retry-After;
 * - a timeout (no answer in time, or the invocation's deadline): 504;
 * - throttling, a 5xx from DynamoDB, a missing table, or keys left unprocessed: 503 with Retry-After;
 * - anything else: the error itself (which becomes a 500).
 * `what` names the read or write in the client's words.
 */
export function dependencyFailure(error: unknown, what: string): Error {
  if (error instanceof HttpError) return error;
  const chain = causeChain(error);
  const unavailable = retryLater(503, `The ${what} is unavailable right now; try again later.`, error);
  if (chain.some(isConnectionFailure)) return unavailable;
  // A body the SDK could not parse as JSON: a SyntaxError it decorated with the response ($metadata, $response).
  const unparsable = chain.some(
    (e) =>
      e.name === 'SyntaxError' && ('$metadata' in (e as object) || '$response' in (e as object) || '$responseBodyText' in (e as object)),
  );
  if (unparsable || chain.some((e) => e instanceof UnreadableStoreAnswerError)) {
    if (chain.some((e) => (e.$metadata?.httpStatusCode ?? 0) >= 500)) return unavailable;
    return retryLater(502, `The ${what} gave an answer that cannot be read; try again later.`, error);
  }
  if (chain.some((e) => TIMEOUT_CODES.has(codeOf(e)) || TIMEOUT_NAMES.has(nameOf(e)))) {
    return httpError(504, `The ${what} timed out; try again.`, { cause: error });
  }
  if (chain.some(isStoreUnavailable)) return unavailable;
  return error instanceof Error ? error : new Error(String(error));
}
