import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';

/**
 * The one error model. Every failure a client may see is an HttpError: a short sentence
 * (`message`, sent as text/plain), a status code and optional headers. Anything else becomes a
 * 500 with a generic sentence, so internals never reach a client.
 */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly expose = true;
  readonly headers: Record<string, string>;

  constructor(statusCode: number, message: string, options: { cause?: unknown; headers?: Record<string, string> } = {}) {
    super(message, { cause: options.cause });
    this.statusCode = statusCode;
    this.headers = options.headers ?? {};
  }
}

/** 400: a query parameter or header is invalid. */
export class BadRequestError extends HttpError {
  override name = 'BadRequestError';
  constructor(message: string) {
    super(400, message);
  }
}

/**
 * 401: no usable bearer token. Carries the challenge clients expect: a bare `Bearer` unless the
 * caller gives the door's own (lib/auth/challenge.ts, bearerChallenge).
 */
export class UnauthorizedError extends HttpError {
  override name = 'UnauthorizedError';
  constructor(message: string, cause?: unknown, challenge = 'Bearer') {
    super(401, message, { cause, headers: { 'WWW-Authenticate': challenge } });
  }
}

/** 403: authenticated, but not allowed (no tenant, broker not allowed, ticket required). */
export class ForbiddenError extends HttpError {
  override name = 'ForbiddenError';
  constructor(message: string) {
    super(403, message);
  }
}

/** 404: not found, or not visible to this caller (same answer on purpose). */
export class NotFoundError extends HttpError {
  override name = 'NotFoundError';
  constructor(message: string) {
    super(404, message);
  }
}

/** 405: the path exists, the method does not; `Allow` names the ones that do. */
export class MethodNotAllowedError extends HttpError {
  override name = 'MethodNotAllowedError';
  constructor(message: string, allowed: readonly string[]) {
    super(405, message, { headers: { Allow: allowed.join(', ') } });
  }
}

/**
 * 502: a dependency answered something that cannot be read (a page without `Items`, an item that
 * is not an object). A failed read, never an empty one; the client may retry later.
 */
export class BadGatewayError extends HttpError {
  override name = 'BadGatewayError';
  constructor(message: string, cause?: unknown, retryAfterSeconds = 5) {
    super(502, message, { cause, headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

/** 503: a dependency is throttled or down after bounded retries; the client may retry later. */
export class ServiceUnavailableError extends HttpError {
  override name = 'ServiceUnavailableError';
  constructor(message: string, cause?: unknown, retryAfterSeconds = 5) {
    super(503, message, { cause, headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

/** 504: a dependency did not answer in time. */
export class GatewayTimeoutError extends HttpError {
  override name = 'GatewayTimeoutError';
  constructor(message: string, cause?: unknown) {
    super(504, message, { cause });
  }
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
  const unavailable = new ServiceUnavailableError(`The ${what} is unavailable right now; try again later.`, error);
  if (chain.some(isConnectionFailure)) return unavailable;
  // A body the SDK could not parse as JSON: a SyntaxError it decorated with the response ($metadata, $response).
  const unparsable = chain.some(
    (e) =>
      e.name === 'SyntaxError' && ('$metadata' in (e as object) || '$response' in (e as object) || '$responseBodyText' in (e as object)),
  );
  if (unparsable || chain.some((e) => e instanceof UnreadableStoreAnswerError)) {
    if (chain.some((e) => (e.$metadata?.httpStatusCode ?? 0) >= 500)) return unavailable;
    return new BadGatewayError(`The ${what} gave an answer that cannot be read; try again later.`, error);
  }
  if (chain.some((e) => TIMEOUT_CODES.has(codeOf(e)) || TIMEOUT_NAMES.has(nameOf(e)))) {
    return new GatewayTimeoutError(`The ${what} timed out; try again.`, error);
  }
  if (chain.some(isStoreUnavailable)) return unavailable;
  return error instanceof Error ? error : new Error(String(error));
}
