import { AsyncLocalStorage } from 'node:async_hooks';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * CloudWatch metrics in Embedded Metric Format (EMF): one JSON line per request on stdout, which
 * Lambda ships to CloudWatch Logs and CloudWatch turns into metrics. infra/alarms.yml and
 * infra/dashboard.yml read these exact names and dimensions: rename here, rename there.
 */

/** Namespace of every metric; set in code so a run without POWERTOOLS_METRICS_NAMESPACE never warns. */
export const METRICS_NAMESPACE = 'EndpointReadService';

/**
 * The two operations of the contract, the MCP door (`POST /api/mcp`) and the public API's token
 * authorizer, used as the `operation` dimension.
 */
export type Operation = 'listEndpointInventory' | 'getEndpointObservations' | 'mcp' | 'authorizer';

/** Metric names, one place (the alarms and the dashboard use the same strings). */
export const METRIC = Object.freeze({
  requests: 'Requests',
  failures4xx: 'Failures4xx',
  failures5xx: 'Failures5xx',
  latency: 'Latency',
  itemsReturned: 'ItemsReturned',
  auditWrites: 'AuditWrites',
  auditWriteFailures: 'AuditWriteFailures',
  toolCalls: 'ToolCalls',
  toolErrors: 'ToolErrors',
  brokerMisconfigurations: 'BrokerMisconfigurations',
  keySetFailures: 'KeySetFailures',
  /** The token authorizer failed to judge a token (key set unreachable, anything unexpected): API Gateway answered 503. */
  authorizerFailures: 'AuthorizerFailures',
  /** Stored agent records a read left out because they cannot be read (corrupt writes). */
  unreadableRecords: 'UnreadableRecords',
  /** Stored samples a dashboard read left out because they cannot be read (corrupt writes). */
  unreadableSamples: 'UnreadableSamples',
});

/**
 * The metrics of one invocation: its own Metrics buffer (default dimension `service`, one value per
 * deployed stage; the request adds `operation`), flushed as one EMF line by the observability
 * middleware. One per invocation, never shared: the functions of the local stack run in one
 * process, where the MCP door's request and the observations request it makes are in flight at
 * the same time, and on AWS as locally an invocation's line holds only its own metrics.
 */
export interface InvocationMetrics {
  readonly operation: Operation;
  readonly metrics: Metrics;
  /** Set by the flush: the buffer then serves another request, and nothing more goes in it from here. */
  ended: boolean;
}

/**
 * The invocation an asynchronous flow of work belongs to. Opened where the invocation starts (the
 * middy plugin hook `requestStart`, see openInvocationScope), so that the handler, every
 * middleware and everything they start inherit it; the request's metrics are put into it later,
 * by the observability middleware. `parent` is the invocation that was running where this one was
 * opened (a handler called in-process by another), whose work goes on after this one ends.
 */
interface InvocationScope {
  invocation: InvocationMetrics | undefined;
  readonly parent: InvocationScope | undefined;
}

const scopes = new AsyncLocalStorage<InvocationScope>();
// Turn the tracking on now, with nothing in it, so that no invocation's scope is ever the first
// store set and so the one of work that began before the tracking was on.
scopes.enterWith(undefined as unknown as InvocationScope);

/**
 * The nearest scope, from here outwards, whose invocation is running (begun, not yet flushed).
 * Parents are only ever such scopes, so a chain is no longer than the nesting of invocations.
 */
function runningScope(): InvocationScope | undefined {
  let scope = scopes.getStore();
  while (scope && (scope.invocation === undefined || scope.invocation.ended)) scope = scope.parent;
  return scope;
}

/**
 * Opens the scope of an invocation that is starting: call it synchronously where the invocation
 * starts, before any of its work (HANDLER_OPTIONS passes it to middy as `requestStart`). Middlewares
 * run inside middy's own asynchronous calls, so a scope opened from one would not reach the handler.
 */
export function openInvocationScope(): void {
  scopes.enterWith({ invocation: undefined, parent: runningScope() });
}

/**
 * Metrics buffers not in use. A flush empties a buffer, so buffers are reused rather than built per
 * request (building one costs about 0.1 ms). Each reads its switches (POWERTOOLS_METRICS_DISABLED,
 * POWERTOOLS_DEV) when it is built.
 */
const idle: Metrics[] = [];

function takeMetrics(): Metrics {
  return (
    idle.pop() ??
    new Metrics({
      namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE,
      serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'endpoint-read-service',
    })
  );
}

/**
 * Starts a request's metrics: its own buffer with the `operation` dimension and one `Requests`
 * count, put into the invocation's scope, so what the use case records goes there. Without an
 * opened scope (a middy chain without HANDLER_OPTIONS) it opens one, which only the middlewares
 * after this one see. Returns the invocation, which endRequestMetrics and flushRequestMetrics take.
 */
export function beginRequestMetrics(operation: Operation): InvocationMetrics {
  const invocation: InvocationMetrics = { operation, metrics: takeMetrics(), ended: false };
  invocation.metrics.addDimension('operation', operation);
  invocation.metrics.addMetric(METRIC.requests, MetricUnit.Count, 1);
  const scope = scopes.getStore();
  if (scope && scope.invocation === undefined) scope.invocation = invocation;
  else scopes.enterWith({ invocation, parent: runningScope() });
  return invocation;
}

/**
 * Ends a request's metrics: latency, and a failure by class when the answer is 4xx or 5xx.
 * `statusCode` is what the client got, after the failure middlewares mapped the error.
 */
export function endRequestMetrics({ metrics }: InvocationMetrics, statusCode: number, latencyMs: number): void {
  metrics.addMetric(METRIC.latency, MetricUnit.Milliseconds, Math.max(0, latencyMs));
  if (statusCode >= 500) metrics.addMetric(METRIC.failures5xx, MetricUnit.Count, 1);
  else if (statusCode >= 400) metrics.addMetric(METRIC.failures4xx, MetricUnit.Count, 1);
  metrics.addMetadata('statusCode', String(statusCode));
}

/** Writes the request's one EMF line (nothing when metrics are disabled); its buffer is free again. */
export function flushRequestMetrics(invocation: InvocationMetrics): void {
  if (invocation.ended) return;
  invocation.ended = true;
  try {
    invocation.metrics.publishStoredMetrics(); // which also empties the buffer, whatever happens
  } finally {
    idle.push(invocation.metrics);
  }
}

let outsideRequests: Metrics | undefined;

/**
 * Where a record goes: the running request's buffer. Outside a request (a script, a test calling
 * a use case directly, work that outlives its request) it is published at once as a line of its
 * own (Powertools' single metric), never held over into another request's line.
 */
function recording(): Metrics {
  const invocation = runningScope()?.invocation;
  if (invocation) return invocation.metrics;
  outsideRequests ??= takeMetrics();
  return outsideRequests.singleMetric();
}

/** How many items a successful read returned: agents listed, or history samples of a dashboard. */
export function recordItemsReturned(_operation: Operation, count: number): void {
  recording().addMetric(METRIC.itemsReturned, MetricUnit.Count, Math.max(0, count));
}

/**
 * One audit write and its outcome. A failed audit write fails the read (DESIGN §5), and the
 * `AuditWriteFailures` alarm watches the second name.
 */
export function recordAuditWrite(outcome: 'ok' | 'failed'): void {
  recording().addMetric(outcome === 'ok' ? METRIC.auditWrites : METRIC.auditWriteFailures, MetricUnit.Count, 1);
}

/** One MCP tool call and whether it ended in an `isError` result; the tool's name goes to the metadata. */
export function recordToolCall(tool: string, isError: boolean): void {
  const metrics = recording();
  metrics.addMetadata('tool', tool);
  metrics.addMetric(METRIC.toolCalls, MetricUnit.Count, 1);
  if (isError) metrics.addMetric(METRIC.toolErrors, MetricUnit.Count, 1);
}

/**
 * The MCP service was refused as a broker (its exchanged token, its broker identity or its issuer
 * client): a configuration problem no user can fix. The `BrokerMisconfigurations` alarm watches it.
 */
export function recordBrokerMisconfiguration(): void {
  recording().addMetric(METRIC.brokerMisconfigurations, MetricUnit.Count, 1);
}

/**
 * The issuer's key set (JWKS) could not be fetched or read, so tokens could not be checked and the
 * request was answered 503/504. The `KeySetFailures` alarm watches it: the issuer or the route to
 * it is down, not the users' tokens.
 */
export function recordKeySetFailure(): void {
  recording().addMetric(METRIC.keySetFailures, MetricUnit.Count, 1);
}

/**
 * The token authorizer could not judge a token (its key set unreachable, or anything unexpected),
 * so API Gateway answered AUTHORIZER_FAILURE (503). A refused token is not a failure. The
 * `AuthorizerFailures` alarm watches it.
 */
export function recordAuthorizerFailure(invocation: InvocationMetrics): void {
  invocation.metrics.addMetric(METRIC.authorizerFailures, MetricUnit.Count, 1);
}

/**
 * Stored agent records a successful read left out because they cannot be read; recorded on every
 * read (0 included), so an alarm on its sum sees data, and logged with each record's key.
 */
export function recordUnreadableRecords(_operation: Operation, count: number): void {
  recording().addMetric(METRIC.unreadableRecords, MetricUnit.Count, Math.max(0, count));
}

/**
 * Stored samples a dashboard read left out because they cannot be read; recorded on every read
 * (0 included). The dashboard also says so in a finding.
 */
export function recordUnreadableSamples(count: number): void {
  recording().addMetric(METRIC.unreadableSamples, MetricUnit.Count, Math.max(0, count));
}
