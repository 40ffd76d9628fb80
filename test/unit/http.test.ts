import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failureBody, parseFailureBody } from '../../lib/responses.js';

describe('Functions: failureBody, parseFailureBody', () => {
  it('reads back the sentence and the request id of every failure body', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((t) => !t.includes('(request id:')),
        fc.uuid(),
        (sentence, requestId) => {
          expect(parseFailureBody(failureBody(sentence, requestId))).toEqual({ sentence, requestId });
        },
      ),
    );
  });

  it.each(['{"message":"Forbidden"}', '<html>Bad Gateway</html>', '', 'No request id here.'])(
    'reads nothing from %j, which the service did not write',
    (body) => {
      expect(parseFailureBody(body)).toBeUndefined();
    },
  );
});
