import type { Context } from 'aws-lambda';

/** Left to an invocation after its deadline: room to answer, and to write a refusal's audit item. */
const DEADLINE_MARGIN_MS = 1_000;

/** A Lambda context that carries the invocation's deadline (set by lib/middleware/context-deadline.ts invocationDeadline). */
export interface DeadlineContext extends Context {
  deadline?: AbortSignal;
}

/**
 * The one deadline of an invocation: the Lambda's remaining time less a margin. Every I/O of the
 * request (the JWKS fetch, each DynamoDB call with its retries, the audit write, the MCP door's
 * upstream calls) stops with it, so the client always gets the service's own text/plain 504 (or
 * 503), never API Gateway's bare 502 after Lambda cut the run.
 */
export function deadlineOf(context: Pick<Context, 'getRemainingTimeInMillis'>, marginMs = DEADLINE_MARGIN_MS): AbortSignal {
  return AbortSignal.timeout(Math.max(0, context.getRemainingTimeInMillis() - marginMs));
}
