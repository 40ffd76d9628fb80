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

/** 406: the answer cannot be sent in a representation the client accepts. */
export class NotAcceptableError extends HttpError {
  override name = 'NotAcceptableError';
  constructor(message: string) {
    super(406, message);
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

const THROTTLE_OR_UNAVAILABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ResourceNotFoundException',
  'LimitExceededException',
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH']);
const TIMEOUT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'AbortError']);

/**
 * Maps a failed DynamoDB call to the failure a client sees: 504 when it timed out, 503 when it
 * was throttled, unavailable or unreachable (including a missing table), and the error itself
 * otherwise (which becomes a 500). `what` names the read or write in the client's words.
 */
export function dependencyFailure(error: unknown, what: string): Error {
  if (error instanceof HttpError) return error;
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  const name = e?.name ?? '';
  const code = e?.code ?? '';
  if (TIMEOUT_NAMES.has(name) || code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') {
    return new GatewayTimeoutError(`The ${what} timed out; try again.`, error);
  }
  const status = e?.$metadata?.httpStatusCode ?? 0;
  if (THROTTLE_OR_UNAVAILABLE.has(name) || NETWORK_CODES.has(code) || status >= 500) {
    return new ServiceUnavailableError(`The ${what} is unavailable right now; try again later.`, error);
  }
  return error instanceof Error ? error : new Error(String(error));
}
