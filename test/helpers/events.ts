import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { lambdaContext } from '../../infra/local/lambda-context.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'events');

/** A fresh copy of an event fixture (test/fixtures/events/<source>/<name>.json), optionally changed. */
export function eventFixture<T>(source: string, name: string, change: (event: T) => void = () => undefined): T {
  const event = JSON.parse(readFileSync(join(FIXTURES, source, `${name}.json`), 'utf8')) as T;
  change(event);
  return event;
}

export function testContext(functionName = 'test'): Context {
  return lambdaContext(functionName);
}

/** Sets a request header in both maps of a payload-1.0 event, as API Gateway fills them. */
export function setHeader(event: APIGatewayProxyEvent, name: string, value: string): void {
  event.headers[name] = value;
  event.multiValueHeaders[name] = [value];
}
