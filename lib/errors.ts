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

/** 401: no usable bearer token. Carries the challenge clients expect. */
export class UnauthorizedError extends HttpError {
  override name = 'UnauthorizedError';
  constructor(message: string, cause?: unknown) {
    super(401, message, { cause, headers: { 'WWW-Authenticate': 'Bearer' } });
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

const THROTTLE_OR_UNAVAILABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ResourceNotFoundException',
  'LimitExceededException',
  // lib/store/batch-get.ts: DynamoDB kept returning keys unprocessed (it throttles a batch that way).
  'UnprocessedKeysError',
]);
/** The connection was refused, reset or closed, or the host is unreachable: the store is unavailable, whatever the error is named. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const TIMEOUT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'AbortError']);

interface ErrorFacts {
  name?: unknown;
  code?: unknown;
  cause?: unknown;
  $metadata?: { httpStatusCode?: number };
}

/** The error and its causes, outermost first (a bounded walk: cause chains may loop). */
function causeChain(error: unknown): ErrorFacts[] {
  const chain: ErrorFacts[] = [];
  let current: unknown = error;
  while (current !== null && typeof current === 'object' && chain.length < 8 && !chain.includes(current as ErrorFacts)) {
    chain.push(current as ErrorFacts);
    current = (current as ErrorFacts).cause;
  }
  return chain;
}

/**
 * Maps a failed DynamoDB call to the failure a client sees. The SDK names a reset or closed
 * connection (ECONNRESET, EPIPE) a `TimeoutError`, so errors are classified by what happened (the
 * system error code anywhere in the cause chain, the SDK's `$metadata`), and by name only when
 * nothing more precise is known:
 * - a refused, reset or closed connection, an unreachable host, throttling, a missing table or a
 *   5xx from DynamoDB: 503 with Retry-After (the store is unavailable);
 * - an answer that is not a DynamoDB answer (UnreadableStoreAnswerError, or a body the SDK could
 *   not parse as JSON): 502 with Retry-After;
 * - a timeout (no answer in time): 504;
 * - anything else: the error itself (which becomes a 500).
 * `what` names the read or write in the client's words.
 */
export function dependencyFailure(error: unknown, what: string): Error {
  if (error instanceof HttpError) return error;
  const chain = causeChain(error);
  const codes = chain.map((e) => (typeof e.code === 'string' ? e.code : ''));
  const names = chain.map((e) => (typeof e.name === 'string' ? e.name : ''));
  const unavailable = new ServiceUnavailableError(`The ${what} is unavailable right now; try again later.`, error);
  if (codes.some((c) => NETWORK_CODES.has(c))) return unavailable;
  // A body the SDK could not parse as JSON: a SyntaxError it decorated with the response ($metadata, $response).
  const unparsable = chain.some(
    (e) => e.name === 'SyntaxError' && ('$metadata' in (e as object) || '$response' in (e as object) || '$responseBodyText' in (e as object)),
  );
  if (unparsable || chain.some((e) => e instanceof UnreadableStoreAnswerError)) {
    return new BadGatewayError(`The ${what} gave an answer that cannot be read; try again later.`, error);
  }
  if (codes.some((c) => TIMEOUT_CODES.has(c)) || names.some((n) => TIMEOUT_NAMES.has(n))) {
    return new GatewayTimeoutError(`The ${what} timed out; try again.`, error);
  }
  const status = chain.reduce((s, e) => Math.max(s, e.$metadata?.httpStatusCode ?? 0), 0);
  if (names.some((n) => THROTTLE_OR_UNAVAILABLE.has(n)) || status >= 500) return unavailable;
  return error instanceof Error ? error : new Error(String(error));
}
