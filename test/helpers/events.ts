import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'events');

/** A fresh copy of an event fixture (test/fixtures/events/<source>/<name>.json), optionally changed. */
export function eventFixture<T>(source: string, name: string, change: (event: T) => void = () => undefined): T {
  const event = JSON.parse(readFileSync(join(FIXTURES, source, `${name}.json`), 'utf8')) as T;
  change(event);
  return event;
}

/** A Lambda context as the runtime passes it to a handler called in-process: 29 seconds left, as behind API Gateway. */
export function testContext(functionName = 'test', remainingMs = 29_000): Context {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Sets a request header in both maps of a payload-1.0 event, as API Gateway fills them. */
export function setHeader(event: APIGatewayProxyEvent, name: string, value: string): void {
  event.headers[name] = value;
  event.multiValueHeaders[name] = [value];
}
