import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { MiddlewareObj } from '@middy/core';
import { logger } from './logger.js';

/**
 * The one X-Ray tracer (Powertools Tracer), loaded by the first invocation X-Ray samples. On Lambda
 * with active tracing (serverless.yml `provider.tracing.lambda`) it records a subsegment for the
 * handler (invocationTrace below), one per AWS SDK call of the clients passed to `traced`
 * (DynamoDB, STS, Secrets Manager), and one per `fetch` (the token exchange, the issuer's keys, the
 * private observations API), which also carries the trace header (`X-Amzn-Trace-Id`) so that the
 * private API and the observations function continue the same trace. Outside Lambda (no
 * `AWS_EXECUTION_ENV`) or with `POWERTOOLS_TRACE_ENABLED=false` it does nothing. It never records
 * a handler's answer (tenant data) as metadata.
 *
 * Why it waits for a sampled invocation: the X-Ray SDK under it costs an instance 10 to 13 ms of
 * import and an async hook on every promise after (docs/operations.md, Tracing), and for an
 * invocation X-Ray does not sample it records nothing anyone can read. So an instance whose
 * invocations are not sampled never loads it; the first sampled one loads it (the bundle holds it,
 * evaluated only then), captures the clients made before, and from then on every invocation is
 * traced as Powertools traces it. Until then the one thing the trace needs from this instance, its header
 * on the private hop, is Lambda's own (traceHeaderWithoutTracer). An instance of provisioned
 * concurrency, whose init no request waits for, loads it at init.
 */
let loaded: { tracer: Tracer; handlerTrace: MiddlewareObj } | undefined;
let loading: Promise<void> | undefined;
/** Clients made before the tracer loaded: captured when it does (WeakRef: a fenced client dropped by its cache is not kept for it). */
let untraced: WeakRef<object>[] = [];
/** Whether this instance has begun an invocation: a tracer loaded after that sees no cold start. */
let invoked = false;

/** The annotation (searchable in X-Ray: `annotation.tenant = "acme"`) naming the tenant a request is for, once its token is verified. */
export const TENANT_ANNOTATION = 'tenant';

/** Whether X-Ray samples the invocation running now: Lambda's trace header for it (`_X_AMZN_TRACE_ID`) says `Sampled=1`. */
function invocationSampled(): boolean {
  return /(?:^|;)\s*Sampled=1\s*(?:;|$)/.test(process.env._X_AMZN_TRACE_ID ?? '');
}

async function loadTracer(warm: boolean): Promise<void> {
  const [{ Tracer }, { captureLambdaHandler }] = await Promise.all([
    import('@aws-lambda-powertools/tracer'),
    import('@aws-lambda-powertools/tracer/middleware'),
  ]);
  const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'endpoint-read-service';
  // Powertools annotates the first invocation it sees as the cold start: loaded after the instance's first, none is.
  const tracer = new (class extends Tracer {
    constructor() {
      super({ serviceName });
      if (warm) this.coldStart = false;
    }
  })();
  for (const ref of untraced) {
    const client = ref.deref();
    if (client) tracer.captureAWSv3Client(client);
  }
  untraced = [];
  loaded = { tracer, handlerTrace: captureLambdaHandler(tracer, { captureResponse: false }) };
}

/** Starts loading the tracer once; a tracer that cannot load costs the trace, never the answer: invocations go on untraced. */
function startLoading(warm: boolean): Promise<void> {
  loading ??= loadTracer(warm).catch((error: unknown) => logger.warn('X-Ray tracer not loaded', { error }));
  return loading;
}

// An instance Lambda starts ahead of its requests (provisioned concurrency) has its init to spare:
// it loads the tracer then (its import waits for it), so that no request waits for it.
if (process.env.AWS_LAMBDA_INITIALIZATION_TYPE === 'provisioned-concurrency') await startLoading(false);

/**
 * The invocation's X-Ray subsegment (`## index.handler`, annotated `ColdStart` and `Service`), by
 * Powertools' middleware once the tracer is loaded (a sampled invocation loads it first). The
 * answer is never kept as trace metadata: it is tenant data (an inventory, a dashboard, an
 * authorizer's context). An error is, as Powertools records it (its message; the clients see only
 * their text/plain sentence).
 */
export function invocationTrace(): MiddlewareObj {
  return {
    async before(request) {
      const warm = invoked;
      invoked = true;
      if (loaded === undefined && (loading !== undefined || invocationSampled())) await startLoading(warm);
      return loaded?.handlerTrace.before?.(request);
    },
    after: (request) => loaded?.handlerTrace.after?.(request),
    onError: (request) => loaded?.handlerTrace.onError?.(request),
  };
}

/** An AWS SDK client whose calls are traced: at once when the tracer is loaded, else when it loads. */
export function traced<T extends object>(client: T): T {
  if (loaded) return loaded.tracer.captureAWSv3Client(client);
  // Fenced clients come and go (one per tenant an hour): the references to those already collected go first.
  untraced = [...untraced.filter((ref) => ref.deref() !== undefined), new WeakRef(client)];
  return client;
}

/** Marks the current trace with the verified caller's tenant (nothing to mark where no tracer is loaded: nothing is recorded). */
export function annotateTenant(tenantId: string): void {
  loaded?.tracer.putAnnotation(TENANT_ANNOTATION, tenantId);
}

/**
 * The trace header a `fetch` to the next hop carries itself: none while Tracer traces (it adds
 * its own, its subsegment as the parent), else Lambda's header for the invocation, so the private
 * API and the function behind it keep this trace and its sampling decision rather than starting
 * one of their own.
 */
export function traceHeaderWithoutTracer(): Record<string, string> {
  if (loaded?.tracer.isTracingEnabled()) return {};
  const header = process.env._X_AMZN_TRACE_ID;
  return header ? { 'X-Amzn-Trace-Id': header } : {};
}
