import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * CloudWatch metrics in Embedded Metric Format (EMF), Powertools' way: one `Metrics` per function,
 * made when the module loads, flushed after each invocation by Powertools' `logMetrics` middleware
 * (lib/middleware/observability.ts), with the `operation` dimension beside Powertools' `service`.
 * infra/alarms.yml and infra/dashboard.yml read these exact names and dimensions: rename here,
 * rename there.
 */

/** Namespace of every metric; set in code so a run without POWERTOOLS_METRICS_NAMESPACE never warns. */
export const METRICS_NAMESPACE = 'EndpointReadService';

/**
 * The two operations of the contract, the MCP door (`POST /api/mcp`) and the public API's token
 * authorizer, used as the `operation` dimension: one per function.
 */
export type Operation = 'listEndpointInventory' | 'getEndpointObservations' | 'mcp' | 'authorizer';

/** Metric names, one place (the alarms and the dashboard use the same strings). */
export const METRIC = Object.freeze({
  requests: 'Requests',
  failures4xx: 'Failures4xx',
  failures5xx: 'Failures5xx',
  latency: 'Latency',
  /** A streamed answer: from the request's start until its status and headers leave the function (the client's first byte). */
  timeToFirstByte: 'TimeToFirstByte',
  itemsReturned: 'ItemsReturned',
  auditWrites: 'AuditWrites',
  auditWriteFailures: 'AuditWriteFailures',
  toolCalls: 'ToolCalls',
  toolErrors: 'ToolErrors',
  brokerMisconfigurations: 'BrokerMisconfigurations',
  keySetFailures: 'KeySetFailures',
  /** Of those, the issuer's discovery document (where its keys are listed) could not be fetched or used. */
  discoveryFailures: 'IssuerDiscoveryFailures',
  /** The token authorizer failed to judge a token (key set unreachable, anything unexpected): API Gateway answered 503. */
  authorizerFailures: 'AuthorizerFailures',
  /** The token authorizer refused a token by failing with `Unauthorized` (the MCP door's way), which Lambda counts as an error. */
  tokensRefused: 'TokensRefused',
  /** Stored agent records a read left out because they cannot be read (corrupt writes). */
  unreadableRecords: 'UnreadableRecords',
  /** Stored samples a dashboard read left out because they cannot be read (corrupt writes). */
  unreadableSamples: 'UnreadableSamples',
});

/** The function's metrics (the `service` dimension from POWERTOOLS_SERVICE_NAME, one value per deployed stage). */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'endpoint-read-service',
});

/**
 * How a request ended for the client: `Latency`, a failure by class when the answer is 4xx or 5xx,
 * and the status as metadata. `statusCode` is what the client got, after the failure middlewares
 * mapped the error.
 */
export function recordAnswer(statusCode: number, latencyMs: number): void {
  metrics.addMetric(METRIC.latency, MetricUnit.Milliseconds, Math.max(0, latencyMs));
  if (statusCode >= 500) metrics.addMetric(METRIC.failures5xx, MetricUnit.Count, 1);
  else if (statusCode >= 400) metrics.addMetric(METRIC.failures4xx, MetricUnit.Count, 1);
  metrics.addMetadata('statusCode', String(statusCode));
}

/**
 * How long a streamed answer kept its client waiting for its first byte: the status and headers
 * leave the function as the handler answers (after the inventory's first page is read), well
 * before its last byte, which `Latency` counts. The `inventory-p99-first-byte` alarm watches it.
 */
export function recordTimeToFirstByte(ms: number): void {
  metrics.addMetric(METRIC.timeToFirstByte, MetricUnit.Milliseconds, Math.max(0, ms));
}

/** How many items a successful read returned: agents listed, or history samples of a dashboard. */
export function recordItemsReturned(count: number): void {
  metrics.addMetric(METRIC.itemsReturned, MetricUnit.Count, Math.max(0, count));
}

/**
 * One audit write and its outcome. A failed audit write fails the read (DESIGN §5), and the
 * `AuditWriteFailures` alarm watches the second name.
 */
export function recordAuditWrite(outcome: 'ok' | 'failed'): void {
  metrics.addMetric(outcome === 'ok' ? METRIC.auditWrites : METRIC.auditWriteFailures, MetricUnit.Count, 1);
}

/** One MCP tool call and whether it ended in an `isError` result; the tool's name goes to the metadata. */
export function recordToolCall(tool: string, isError: boolean): void {
  metrics.addMetadata('tool', tool);
  metrics.addMetric(METRIC.toolCalls, MetricUnit.Count, 1);
  if (isError) metrics.addMetric(METRIC.toolErrors, MetricUnit.Count, 1);
}

/**
 * The MCP service was refused as a broker (its exchanged token, its broker identity or its issuer
 * client): a configuration problem no user can fix. The `BrokerMisconfigurations` alarm watches it.
 */
export function recordBrokerMisconfiguration(): void {
  metrics.addMetric(METRIC.brokerMisconfigurations, MetricUnit.Count, 1);
}

/**
 * The issuer's key set (JWKS) could not be fetched or read, so tokens could not be checked and the
 * request was answered 503/504. The `KeySetFailures` alarm watches it: the issuer or the route to
 * it is down, not the users' tokens.
 */
export function recordKeySetFailure(): void {
  metrics.addMetric(METRIC.keySetFailures, MetricUnit.Count, 1);
}

/**
 * Of the KeySetFailures, one whose cause was the issuer's discovery document (down, not JSON,
 * another issuer's, no usable `jwks_uri`): counted beside it, so the alarm on KeySetFailures
 * still fires and this name says which step to look at.
 */
export function recordDiscoveryFailure(): void {
  metrics.addMetric(METRIC.discoveryFailures, MetricUnit.Count, 1);
}

/**
 * The token authorizer could not judge a token (its key set unreachable, or anything unexpected),
 * so API Gateway answered AUTHORIZER_FAILURE (503). A refused token is not a failure. The
 * `AuthorizerFailures` alarm watches it.
 */
export function recordAuthorizerFailure(): void {
  metrics.addMetric(METRIC.authorizerFailures, MetricUnit.Count, 1);
}

/**
 * The token authorizer refused a token with the error `Unauthorized`, which Lambda counts in its
 * `Errors` like a crash: the `authorizer-errors` alarm subtracts these to see the failures.
 */
export function recordTokenRefused(): void {
  metrics.addMetric(METRIC.tokensRefused, MetricUnit.Count, 1);
}

/**
 * Stored agent records a successful read left out because they cannot be read; recorded on every
 * read (0 included), so an alarm on its sum sees data, and logged with each record's key.
 */
export function recordUnreadableRecords(count: number): void {
  metrics.addMetric(METRIC.unreadableRecords, MetricUnit.Count, Math.max(0, count));
}

/**
 * Stored samples a dashboard read left out because they cannot be read; recorded on every read
 * (0 included). The dashboard also says so in a finding.
 */
export function recordUnreadableSamples(count: number): void {
  metrics.addMetric(METRIC.unreadableSamples, MetricUnit.Count, Math.max(0, count));
}
