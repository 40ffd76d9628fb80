import type { APIGatewayProxyEvent } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { restRequest } from '../../functions/rest-event.js';
import { HttpError } from '../../lib/errors.js';
import { parseAttribution, parseObservationsQuery } from '../../lib/observations/query-and-attribution.js';
import type { RestRequest } from '../../lib/rest-request.js';
import { eventFixture } from '../helpers/events.js';

function event(query: Record<string, string[]>, headers: Record<string, string[]> = {}): RestRequest {
  return restRequest(
    eventFixture<APIGatewayProxyEvent>('rest-api', 'get-endpoint-observations', (e) => {
      e.multiValueQueryStringParameters = query;
      e.queryStringParameters = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v[v.length - 1] as string]));
      e.multiValueHeaders = { ...e.multiValueHeaders, ...headers };
      e.headers = Object.fromEntries(Object.entries(e.multiValueHeaders).map(([k, v]) => [k, (v ?? [])[0] as string]));
    }),
  );
}

describe('Function: parseObservationsQuery', () => {
  it('applies the defaults minutes=60 and limit=100', () => {
    expect(parseObservationsQuery(event({ agent_id: ['a-1'] }))).toEqual({ agent_id: 'a-1', minutes: 60, limit: 100 });
  });

  it('accepts the bounds exactly and a 128-character non-ASCII agent_id', () => {
    const id = '東'.repeat(128);
    expect(parseObservationsQuery(event({ agent_id: [id], minutes: ['5'], limit: ['500'] }))).toEqual({
      agent_id: id,
      minutes: 5,
      limit: 500,
    });
    expect(parseObservationsQuery(event({ agent_id: ['a'], minutes: ['10080'], limit: ['1'] }))).toEqual({
      agent_id: 'a',
      minutes: 10080,
      limit: 1,
    });
  });

  it('counts agent_id in characters, as JSON Schema does: 128 emoji (256 UTF-16 units) pass, 129 do not', () => {
    const emoji = '😀'.repeat(128);

    expect(parseObservationsQuery(event({ agent_id: [emoji] })).agent_id).toBe(emoji);
    expect(() => parseObservationsQuery(event({ agent_id: [`${emoji}😀`] }))).toThrow(
      'Query parameter agent_id is required and must be 1 to 128 characters.',
    );
  });

  it('answers any query either with a parsed value within bounds or a BadRequestError, never anything else', () => {
    const value = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.integer({ min: -20000, max: 20000 }).map(String),
      fc.constantFrom('5.5', '1e2', '+5', '', ' 60', '0x10'),
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('agent_id', 'minutes', 'limit', 'other'), fc.array(value, { minLength: 1, maxLength: 2 })),
        (query) => {
          try {
            const parsed = parseObservationsQuery(event(query));
            return parsed.minutes >= 5 && parsed.minutes <= 10080 && parsed.limit >= 1 && parsed.limit <= 500 && parsed.agent_id.length > 0;
          } catch (error) {
            return error instanceof HttpError && error.statusCode === 400;
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('Function: parseAttribution', () => {
  it('trims the reason and keeps the ticket pair', () => {
    const parsed = parseAttribution(
      event(
        {},
        { 'X-Service-Reason': ['  disk alert  '], 'x-service-ticket-number': ['INC-1/2#3'], 'X-SERVICE-TICKET-SYSTEM': ['servicenow'] },
      ),
      'servicenow',
    );

    expect(parsed).toEqual({ reason: 'disk alert', ticketNumber: 'INC-1/2#3', ticketSystem: 'servicenow' });
  });

  it('answers any header values with attribution or a BadRequestError, never anything else', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('X-Service-Reason', 'x-service-ticket-number', 'X-Service-Ticket-System'),
          fc.array(fc.oneof(fc.string({ maxLength: 600 }), fc.constant('servicenow')), { minLength: 1, maxLength: 2 }),
        ),
        (headers) => {
          try {
            const a = parseAttribution(event({}, headers), 'servicenow');
            return a.reason.length >= 3 && a.reason.length <= 500 && (a.ticketNumber === undefined) === (a.ticketSystem === undefined);
          } catch (error) {
            return error instanceof HttpError && error.statusCode === 400;
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
