import type { MiddlewareObj, Request } from '@middy/core';
import { type DeadlineContext, deadlineOf } from '../invocation-deadline.js';

/** Puts the invocation's deadline on the context (`context.deadline`, lib/invocation-deadline.ts) first thing, for the middlewares and the handler to pass on. */
export function invocationDeadline(): MiddlewareObj<unknown, unknown, Error, DeadlineContext> {
  const setDeadline = (request: Request<unknown, unknown, Error, DeadlineContext>): void => {
    request.context.deadline = deadlineOf(request.context);
  };
  return { before: setDeadline };
}
