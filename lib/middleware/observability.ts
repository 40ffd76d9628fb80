import { finished, Readable } from 'node:stream';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { MiddlewareObj, Request } from '@middy/core';
import { logger } from '../observability/logger.js';
import {
  beginRequestMetrics,
  endRequestMetrics,
  flushRequestMetrics,
  type InvocationMetrics,
  type Operation,
  recordAuthorizerFailure,
} from '../observability/metrics.js';

export interface ObservabilityOptions {
  /** The contract operation this handler serves; the `operation` metric dimension. */
  operation: Operation;
}

interface ObservedResponse {
  statusCode?: number;
  body?: unknown;
}

/** Each request's metrics and start time: on the request, as concurrent local requests share one handler. */
const inFlight = new WeakMap<Request, { invocation: InvocationMetrics; startedAt: number }>();

/**
 * Request metrics for one operation: a `Requests` count in `before`; `Latency`, and a failure
 * class from the status the client finally gets, in `after` and `onError`; then one EMF line.
 * Each request records into its own buffer (see beginRequestMetrics), so two requests in flight in
 * one process (the local stack's MCP door and the observations request it makes) never share a line.
 * It must sit before `failureHandling()` in the chain, because middy runs `onError` in reverse
 * order of `use`: by the time this `onError` runs, the error has already become its response.
 */
export function requestMetrics(options: ObservabilityOptions): MiddlewareObj {
  const startRequestMetrics = (request: Request): void => {
    inFlight.set(request, { invocation: beginRequestMetrics(options.operation), startedAt: performance.now() });
  };

  const finishRequestMetrics = (request: Request, streamFailed = false): void => {
    const started = inFlight.get(request);
    if (!started) return; // ended already (an error in `after` runs onError too), or never begun
    inFlight.delete(request);
    const response = request.response as ObservedResponse | undefined;
    // An error nobody mapped (no failure middleware) would reach Lambda as a crash: count it as 5xx.
    // So is a stream cut after its 200: the client saw a broken transfer.
    const statusCode = streamFailed ? 500 : typeof response?.statusCode === 'number' ? response.statusCode : request.error ? 500 : 200;
    try {
      endRequestMetrics(started.invocation, statusCode, performance.now() - started.startedAt);
    } finally {
      flushRequestMetrics(started.invocation);
    }
  };

  /** A streamed body is read after `after` runs (middy pipes it then): its request ends when the body does. */
  const finishWhenAnswered = (request: Request): void => {
    const body = (request.response as ObservedResponse | undefined)?.body;
    // A client that went away is no failure of the service's.
    const failed = (error: NodeJS.ErrnoException | null | undefined): boolean =>
      error != null && error.code !== 'ERR_STREAM_PREMATURE_CLOSE';
    if (body instanceof Readable) finished(body, (error) => finishRequestMetrics(request, failed(error)));
    else finishRequestMetrics(request);
  };

  return { before: startRequestMetrics, after: finishWhenAnswered, onError: (request) => finishRequestMetrics(request) };
}

/**
 * Adds the Lambda request id as `correlation_id` to every log line of the request (the same id
 * the client reads in a failure body), and API Gateway's own request id as `api_request_id`, which
 * links the line to the API's access log. Runs after injectLambdaContext, whose `resetKeys` clears
 * both when the request ends.
 */
export function correlationIds(): MiddlewareObj {
  const appendCorrelationIds = (request: Request): void => {
    logger.setCorrelationId(request.context.awsRequestId);
    const event = request.event as { requestContext?: { requestId?: unknown } } | undefined;
    const apiRequestId = event?.requestContext?.requestId;
    if (typeof apiRequestId === 'string' && apiRequestId !== '') logger.appendKeys({ api_request_id: apiRequestId });
  };
  return { before: appendCorrelationIds };
}

/**
 * Everything a handler needs for CloudWatch, as one `use`: structured logs with the Lambda
 * context and correlation ids, and the request metrics flushed as one EMF line per request.
 * Use it first; `failureHandling()` stays last.
 *
 * @example
 * middy(handler).use(observability({ operation: 'listEndpointInventory' })).use(failureHandling())
 */
export function observability(options: ObservabilityOptions): MiddlewareObj[] {
  return [injectLambdaContext(logger, { resetKeys: true }), correlationIds(), requestMetrics(options)];
}

/**
 * The token authorizer's metrics: a `Requests` count, and `AuthorizerFailures` when it fails for
 * any reason but refusing a token (the error `Unauthorized` is its answer, not a failure), then one
 * EMF line. An authorizer answers no HTTP status, so requestMetrics' classes do not apply.
 */
export function authorizerMetrics(options: { refusalMessage: string }): MiddlewareObj {
  const started = new WeakMap<Request, InvocationMetrics>();
  const startAuthorizerMetrics = (request: Request): void => {
    started.set(request, beginRequestMetrics('authorizer'));
  };
  const finishAuthorizerMetrics = (request: Request): void => {
    const invocation = started.get(request);
    if (!invocation) return;
    started.delete(request);
    try {
      if (request.error && request.error.message !== options.refusalMessage) recordAuthorizerFailure(invocation);
    } finally {
      flushRequestMetrics(invocation);
    }
  };
  return { before: startAuthorizerMetrics, after: finishAuthorizerMetrics, onError: finishAuthorizerMetrics };
}

/**
 * Everything the token authorizer needs for CloudWatch, as one `use`: structured logs with the
 * Lambda context and correlation ids, and authorizerMetrics.
 */
export function authorizerObservability(options: { refusalMessage: string }): MiddlewareObj[] {
  return [injectLambdaContext(logger, { resetKeys: true }), correlationIds(), authorizerMetrics(options)];
}
