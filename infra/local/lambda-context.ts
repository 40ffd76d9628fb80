import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/**
 * A Lambda context like the one AWS passes, with API Gateway's 29-second integration budget unless
 * `budgetMs` says otherwise (a streamed answer has the function's whole timeout). The
 * local gateway gives its own request id as the invocation's, so the id in a failure body is the one
 * in the access line.
 */
export function lambdaContext(functionName: string, requestId: string = randomUUID(), budgetMs = 29_000): Context {
  const deadline = Date.now() + budgetMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
