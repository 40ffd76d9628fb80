import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * The one X-Ray tracer (Powertools Tracer), made when the module loads. On Lambda with active
 * tracing (serverless.yml `provider.tracing.lambda`) it records a subsegment for the handler (its
 * middleware in lib/middleware/observability.ts), one per AWS SDK call of the clients passed to
 * `tracer.captureAWSv3Client` (DynamoDB, STS, Secrets Manager), and one per `fetch` (the token
 * exchange, the issuer's keys, the private observations API), which also carries the trace header
 * (`X-Amzn-Trace-Id`) so that the private API and the observations function continue the same
 * trace. Outside Lambda (no `AWS_EXECUTION_ENV`) or with `POWERTOOLS_TRACE_ENABLED=false` it does
 * nothing. It never records a handler's answer (tenant data) as metadata.
 */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'endpoint-read-service' });

/** The annotation (searchable in X-Ray: `annotation.tenant = "acme"`) naming the tenant a request is for, once its token is verified. */
export const TENANT_ANNOTATION = 'tenant';

/** Marks the current trace with the verified caller's tenant. */
export function annotateTenant(tenantId: string): void {
  tracer.putAnnotation(TENANT_ANNOTATION, tenantId);
}
