import {
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dependencyFailure, UnreadableStoreAnswerError } from '../../lib/errors.js';

const meta = { $metadata: {} };

/** The engines here cannot throttle on demand, so these are the SDK's own exception classes, built by hand. */
describe('Function: dependencyFailure (SDK exceptions built by hand: throttling cannot be produced on demand)', () => {
  it.each([
    ['throttled reads', new ProvisionedThroughputExceededException({ message: 'slow down', ...meta })],
    ['account throttling', new ThrottlingException({ message: 'slow down', ...meta })],
    ['request limit', new RequestLimitExceeded({ message: 'slow down', ...meta })],
    ['a DynamoDB internal error', new InternalServerError({ message: 'oops', ...meta })],
    ['a missing table', new ResourceNotFoundException({ message: 'no table', ...meta })],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' })],
  ])('maps %s to 503 with Retry-After and a sentence naming the store', (_what, error) => {
    const failure = dependencyFailure(error, 'inventory store');

    expect(failure).toMatchObject({
      statusCode: 503,
      message: 'The inventory store is unavailable right now; try again later.',
      headers: { 'Retry-After': '5' },
      cause: error,
    });
  });

  it('maps a timeout to 504', () => {
    const timeout = Object.assign(new Error('socket timed out'), { name: 'TimeoutError', code: 'ETIMEDOUT' });
    const noConnection = Object.assign(new Error('the request socket did not establish a connection'), { name: 'TimeoutError' });

    expect(dependencyFailure(timeout, 'observations store')).toMatchObject({
      statusCode: 504,
      message: 'The observations store timed out; try again.',
    });
    expect(dependencyFailure(noConnection, 'observations store')).toMatchObject({ statusCode: 504 });
  });

  it.each([
    [
      'a reset connection the SDK names TimeoutError',
      Object.assign(new Error('read ECONNRESET'), { name: 'TimeoutError', code: 'ECONNRESET' }),
    ],
    ['a closed pipe the SDK names TimeoutError', Object.assign(new Error('write EPIPE'), { name: 'TimeoutError', code: 'EPIPE' })],
    [
      'a reset found in the cause chain',
      Object.assign(new Error('request failed'), {
        name: 'TimeoutError',
        cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      }),
    ],
  ])('maps %s to 503 with Retry-After (the store is unavailable; nothing timed out)', (_what, error) => {
    expect(dependencyFailure(error, 'inventory store')).toMatchObject({
      statusCode: 503,
      message: 'The inventory store is unavailable right now; try again later.',
      headers: { 'Retry-After': '5' },
    });
  });

  it.each([
    ['an unreachable host', Object.assign(new Error('connect EHOSTUNREACH'), { code: 'EHOSTUNREACH' })],
    ['a name that does not resolve', Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })],
    ['a network that is down (a code the SDK does not list)', Object.assign(new Error('connect ENETDOWN'), { code: 'ENETDOWN' })],
    ['an HTTP 429', Object.assign(new Error('Too Many Requests'), { name: 'UnknownError', $metadata: { httpStatusCode: 429 } })],
    ['an HTTP 502 with a JSON body', Object.assign(new Error('Bad Gateway'), { name: 'UnknownError', $metadata: { httpStatusCode: 502 } })],
    ['keys DynamoDB kept unprocessed', Object.assign(new Error('2 keys unprocessed'), { name: 'UnprocessedKeysError' })],
  ])('maps %s to 503 with Retry-After', (_what, error) => {
    expect(dependencyFailure(error, 'inventory store')).toMatchObject({ statusCode: 503, headers: { 'Retry-After': '5' } });
  });

  it('maps the invocation deadline (an aborted request) to 504, not 503', () => {
    const deadline = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const aborted = Object.assign(new Error('Request aborted'), { name: 'AbortError' });

    expect(dependencyFailure(deadline, 'observations store')).toMatchObject({ statusCode: 504 });
    expect(dependencyFailure(aborted, 'observations store')).toMatchObject({ statusCode: 504 });
  });

  it('maps an answer that cannot be read to 502, and the same answer with a 5xx status to 503 (the store said it is unavailable)', () => {
    const unparsable = (status: number): Error =>
      Object.assign(new SyntaxError('Unexpected token \'<\', "<html>" is not valid JSON'), {
        $metadata: { httpStatusCode: status },
        $response: { statusCode: status },
      });

    expect(dependencyFailure(new UnreadableStoreAnswerError('a Query answer without Items'), 'inventory store')).toMatchObject({
      statusCode: 502,
      message: 'The inventory store gave an answer that cannot be read; try again later.',
      headers: { 'Retry-After': '5' },
    });
    expect(dependencyFailure(unparsable(200), 'inventory store')).toMatchObject({ statusCode: 502 });
    for (const status of [500, 502, 503, 504]) {
      expect(dependencyFailure(unparsable(status), 'inventory store')).toMatchObject({
        statusCode: 503,
        message: 'The inventory store is unavailable right now; try again later.',
        headers: { 'Retry-After': '5' },
      });
    }
  });

  it('leaves anything else to become a 500 with the generic sentence', () => {
    const bug = new TypeError('x is undefined');
    const refused = Object.assign(new Error('The conditional request failed'), {
      name: 'ConditionalCheckFailedException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });

    expect(dependencyFailure(bug, 'inventory store')).toBe(bug);
    expect(dependencyFailure(refused, 'inventory store')).toBe(refused);
  });
});
