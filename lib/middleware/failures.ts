import type { MiddlewareObj, Request } from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import type { Context } from 'aws-lambda';
import { HttpError, httpError, httpStatusOf, INTERNAL_ERROR } from '../errors.js';
import { logger } from '../observability/logger.js';
import { FAILURE_HEADERS, failureBody } from '../responses.js';

interface FailureResponse {
  statusCode: number;
  headers?: Record<string, string | number | boolean>;
  body?: string;
}

/** The request id a client can quote: Lambda's own, which is also in every log line. */
export function requestIdOf(context: Context | undefined): string {
  return context?.awsRequestId ?? 'unknown';
}

/** Logs what failed without the error's request data; 5xx with the cause chain, 4xx briefly. */
function logFailure(error: unknown): void {
  const status = httpStatusOf(error);
  // The 500 made for an unexpected error (lib/errors.ts clientFailure) is logged as that error, stack and all.
  const unexpected = error instanceof HttpError && status === 500 && error.cause !== undefined ? error.cause : error;
  const e = unexpected as Error & { statusCode?: number; cause?: unknown };
  const cause = e?.cause as { name?: string; code?: string; message?: string } | undefined;
  const entry = {
    statusCode: status,
    error: e?.name,
    reason: e?.message,
    cause: cause ? { name: cause.name, code: cause.code, message: cause.message } : undefined,
  };
  if (status >= 500) logger.error('request failed', e instanceof HttpError ? entry : { ...entry, stack: e?.stack });
  else logger.info('request refused', entry);
}

/**
 * Finishes every failure as DESIGN §6 wants it: `text/plain; charset=utf-8`, one sentence plus the
 * request id, `Cache-Control: no-store`. Runs after http-error-handler (middy runs onError in
 * reverse order of `use`), which has already hidden non-HTTP errors behind the fallback message.
 */
export function textPlainFailures(): MiddlewareObj {
  const finishFailureResponse = async (request: Request): Promise<void> => {
    const response = request.response as FailureResponse | undefined;
    if (!response) return;
    const sentence = typeof response.body === 'string' && response.body !== '' ? response.body : INTERNAL_ERROR;
    response.body = failureBody(sentence, requestIdOf(request.context));
    response.headers = { ...response.headers, ...FAILURE_HEADERS };
  };
  return { onError: finishFailureResponse };
}

/**
 * The failure half of every handler's chain: use it last, so its http-error-handler sees errors
 * first. One error model, one mapping, for both operations.
 */
export function failureHandling(): MiddlewareObj[] {
  return [textPlainFailures(), httpErrorHandler({ fallbackMessage: INTERNAL_ERROR, logger: logFailure })];
}

/**
 * middy options for every handler: when the Lambda is about to run out of time, answer 504 with a
 * sentence (a plain middy timeout would become a 500) a moment before AWS cuts the invocation.
 */
export const HANDLER_OPTIONS = Object.freeze({
  timeoutEarlyInMillis: 500,
  timeoutEarlyResponse: (): never => {
    throw httpError(504, 'The request ran out of time; try again.');
  },
});
