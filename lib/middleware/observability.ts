import { finished, Readable } from 'node:stream';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { MiddlewareObj, Request } from '@middy/core';
import { logger } from '../observability/logger.js';
import {
  METRIC,
  metrics,
  type Operation,
  recordAnswer,
  recordAuthorizerFailure,
  recordTimeToFirstByte,
  recordTokenRefused,
} from '../observability/metrics.js';
import { invocationTrace } from '../observability/tracer.js';

export interface ObservabilityOptions {
  /** The contract operation this handler serves; the `operation` metric dimension. */
  operation: Operation;
}

interface ObservedResponse {
  statusCode?: number;
  body?: unknown;
}

/** Where requestMetrics keeps a request's start, beside Powertools' own values on `request.internal`. */
const STARTED_AT = 'requestMetricsStartedAt';

/**
 * The `operation` dimension of an invocation's metrics, beside Powertools' `service`. It is added
 * to each flush rather than made a default dimension: a default belongs to the one `Metrics` of
 * the process, and a handler that set it would change it for any other handler in the process
 * (tests load several), where Powertools warns that it overwrote it.
 */
function addOperation(operation: Operation): void {
  metrics.addDimension('operation', operation);
}

/**
 * Powertools' logMetrics, which flushes the function's metrics as one EMF line when the handler
 * has answered, with the invocation's `operation`.
 */
function operationMetrics(operation: Operation): MiddlewareObj[] {
  return [{ before: () => addOperation(operation) }, logMetrics(metrics)];
}

/**
 * Request metrics for one operation: a `Requests` count in `before`; `Latency`, and a failure
 * class from the status the client finally gets, in `after` and `onError` (lib/observability/metrics.ts
 * recordAnswer). It must sit after operationMetrics and before `failureHandling()` in the chain:
 * middy runs `after` and `onError` in reverse order of `use`, so by then the error has become its
 * response, and the flush comes after.
 *
 * A streamed body is read after the handler answered (middy pipes it then, after every `after`):
 * its latency and class are known when the body ends, and flushed then as one more line, since
 * logMetrics flushed before the first byte. A stream cut after its 200 counts as a 5xx: the
 * client saw a broken transfer; a client that went away is no failure of the service's. The time
 * until the handler answered is the stream's `TimeToFirstByte`, in the first line: middy writes
 * the status and headers as soon as the last `after` has run.
 */
export function requestMetrics(operation: Operation): MiddlewareObj {
  const internal = (request: Request): Record<string, unknown> => request.internal as Record<string, unknown>;
  const startRequestMetrics = (request: Request): void => {
    internal(request)[STARTED_AT] = performance.now();
    metrics.addMetric(METRIC.requests, MetricUnit.Count, 1);
  };
  const latency = (request: Request): number => performance.now() - Number(internal(request)[STARTED_AT]);

  const finishRequestMetrics = (request: Request): void => {
    const response = request.response as ObservedResponse | undefined;
    const body = response?.body;
    if (body instanceof Readable) {
      recordTimeToFirstByte(latency(request));
      finished(body, (error) => {
        const failed = Boolean(error) && (error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE';
        recordAnswer(failed ? 500 : (response?.statusCode ?? 200), latency(request));
        // logMetrics' flush cleared the invocation's dimensions with its metrics.
        addOperation(operation);
        metrics.publishStoredMetrics();
      });
      return;
    }
    // An error nobody mapped (no failure middleware) would reach Lambda as a crash: count it as 5xx.
    recordAnswer(typeof response?.statusCode === 'number' ? response.statusCode : request.error ? 500 : 200, latency(request));
  };

  return { before: startRequestMetrics, after: finishRequestMetrics, onError: finishRequestMetrics };
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
 * Everything a handler needs for CloudWatch and X-Ray, as one `use`: structured logs with the
 * Lambda context and correlation ids, the invocation's trace, and the request metrics flushed as
 * one EMF line per request. Use it first; `failureHandling()` stays last.
 *
 * @example
 * middy(handler).use(observability({ operation: 'listEndpointInventory' })).use(failureHandling())
 */
export function observability(options: ObservabilityOptions): MiddlewareObj[] {
  return [
    injectLambdaContext(logger, { resetKeys: true }),
    correlationIds(),
    invocationTrace(),
    ...operationMetrics(options.operation),
    requestMetrics(options.operation),
  ];
}

/**
 * The token authorizer's metrics: a `Requests` count, and `AuthorizerFailures` when it fails for
 * any reason but refusing a token (the error `Unauthorized` is its answer, not a failure), else
 * `TokensRefused`, then one EMF line. An authorizer answers no HTTP status, so requestMetrics'
 * classes do not apply.
 */
export function authorizerMetrics(options: { refusalMessage: string }): MiddlewareObj {
  const countRequest = (): void => {
    metrics.addMetric(METRIC.requests, MetricUnit.Count, 1);
  };
  const countFailure = (request: Request): void => {
    if (!request.error) return;
    if (request.error.message === options.refusalMessage) recordTokenRefused();
    else recordAuthorizerFailure();
  };
  return { before: countRequest, onError: countFailure };
}

/**
 * Everything the token authorizer needs for CloudWatch and X-Ray, as one `use`: structured logs
 * with the Lambda context and correlation ids, the invocation's trace, and authorizerMetrics
 * flushed by logMetrics.
 */
export function authorizerObservability(options: { refusalMessage: string }): MiddlewareObj[] {
  return [
    injectLambdaContext(logger, { resetKeys: true }),
    correlationIds(),
    invocationTrace(),
    ...operationMetrics('authorizer'),
    authorizerMetrics(options),
  ];
}
