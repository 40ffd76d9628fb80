import { describe, expect, it } from 'vitest';
import {
  ATTRIBUTION_SOURCES,
  type AttributionSources,
  attributionSourceValue,
  parsedAttributionSources,
  personRefusalSentence,
} from '../../lib/contract/attribution.js';
import { observationsToolInput, withRequiredReason } from '../../lib/contract/mcp-tools.js';

describe('Function: attributionSourceValue / parsedAttributionSources (X-Service-Attribution-Source)', () => {
  it('gives back every pair of sources it writes', () => {
    for (const reason of ATTRIBUTION_SOURCES) {
      for (const ticket of [undefined, ...ATTRIBUTION_SOURCES]) {
        const sources: AttributionSources = ticket === undefined ? { reason } : { reason, ticket };
        expect(parsedAttributionSources(attributionSourceValue(sources))).toEqual(sources);
      }
    }
    expect(attributionSourceValue({ reason: 'argument', ticket: 'person' })).toBe('reason=argument, ticket=person');
  });

  it.each([
    ['spaces around the comma', 'reason=person ,  ticket=argument', { reason: 'person', ticket: 'argument' }],
    ['surrounding spaces', ' reason=argument ', { reason: 'argument' }],
  ])('reads %s', (_what, value, sources) => {
    expect(parsedAttributionSources(value)).toEqual(sources);
  });

  it.each([
    ['an empty value', ''],
    ['another source', 'reason=model'],
    ['no reason', 'ticket=person'],
    ['the ticket first', 'ticket=person, reason=argument'],
    ['a member twice', 'reason=person, reason=argument'],
    ['another member', 'reason=person, tenant=acme'],
    ['upper case', 'Reason=Person'],
    ['a trailing comma', 'reason=person,'],
  ])('refuses %s', (_what, value) => {
    expect(parsedAttributionSources(value)).toBeNull();
  });
});

describe('Function: personRefusalSentence', () => {
  it.each<[AttributionSources | undefined, string | undefined]>([
    [undefined, undefined],
    [{ reason: 'argument', ticket: 'person' }, undefined],
    [{ reason: 'argument', ticket: 'declined' }, 'The person declined to give a ticket: nothing was read.'],
    [{ reason: 'declined' }, 'The person declined to give a reason: nothing was read.'],
    [{ reason: 'declined', ticket: 'declined' }, 'The person declined to give a reason and a ticket: nothing was read.'],
    [{ reason: 'person', ticket: 'cancelled' }, 'The person cancelled the question for a ticket: nothing was read.'],
    [{ reason: 'cancelled', ticket: 'cancelled' }, 'The person cancelled the question for a reason and a ticket: nothing was read.'],
  ])('says for %j: %s', (sources, sentence) => {
    expect(personRefusalSentence(sources)).toBe(sentence);
  });
});

describe('Function: observationsToolInput / withRequiredReason', () => {
  it('lets a call without reason through the advertised arguments, and not through those of a client that cannot be asked', () => {
    const input = observationsToolInput('servicenow');
    const required = withRequiredReason(input);

    expect(input.safeParse({ agent_id: 'a' }).success).toBe(true);
    expect(required.safeParse({ agent_id: 'a' }).error?.issues[0]?.message).toBe(
      'reason is required: say why the endpoint is read, in 3 to 500 characters',
    );
    // The same arguments, in the same order, and still no unknown one.
    expect(Object.keys(required.shape)).toEqual(Object.keys(input.shape));
    expect(required.safeParse({ agent_id: 'a', reason: 'disk alert', tenant: 'x' }).error?.issues[0]?.code).toBe('unrecognized_keys');
  });
});
