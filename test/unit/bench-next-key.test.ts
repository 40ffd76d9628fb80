import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutNextKey } from '../../bench/floors.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const item = (sk: string) => ({ pk: { S: 'T#t#A' }, sk: { S: sk }, hostname: { S: `host-${sk}` } });

/** A Query answer as an engine writes it: the key after `Items` (DynamoDB, dynalite) or before (DynamoDB Local). */
function answer(items: unknown[], key: unknown, keyFirst: boolean): string {
  const parts = [`"Count":${items.length}`, `"Items":${JSON.stringify(items)}`, `"ScannedCount":${items.length}`];
  if (key !== undefined) parts.splice(keyFirst ? 0 : 2, 0, `"LastEvaluatedKey":${JSON.stringify(key)}`);
  return `{${parts.join(',')}}`;
}

describe("Function: cutNextKey (the bench floors' next page key, from the bytes of a Query answer)", () => {
  const key = { pk: { S: 'T#t#A' }, sk: { S: 'A#b#D' } };

  it('finds the key whether the engine writes it after Items or before', () => {
    expect(cutNextKey(bytes(answer([item('A#a#C'), item('A#a#D')], key, false)))).toEqual(key);
    expect(cutNextKey(bytes(answer([item('A#a#C'), item('A#a#D')], key, true)))).toEqual(key);
  });

  it('finds none on a last page, or an empty one', () => {
    expect(cutNextKey(bytes(answer([item('A#a#C')], undefined, false)))).toBeUndefined();
    expect(cutNextKey(bytes(answer([], undefined, true)))).toBeUndefined();
  });

  it('reads keys holding braces, quotes, backslashes and characters of any width exactly', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('{', '}', '"', '\\', ':', ',', 'a', 'é', '東', '😀', '\u0000', '\u2028') }),
        fc.boolean(),
        (sk, keyFirst) => {
          const tricky = { pk: { S: 'T#t#A' }, sk: { S: `A#${sk}#D` } };
          expect(cutNextKey(bytes(answer([item(`A#${sk}#C`)], tricky, keyFirst)))).toEqual(tricky);
        },
      ),
    );
  });

  it('takes JSON spacing and gives up on what is not a whole object (a cut text, a key that is not an object)', () => {
    expect(cutNextKey(bytes(`{"Items":[], "LastEvaluatedKey": ${JSON.stringify(key)}}`))).toEqual(key);
    const whole = answer([item('A#a#C')], key, false);
    expect(cutNextKey(bytes(whole.slice(0, whole.indexOf('"LastEvaluatedKey"') + 30)))).toBeUndefined();
    expect(cutNextKey(bytes('{"Items":[],"LastEvaluatedKey":"A#b#D"}'))).toBeUndefined();
    expect(cutNextKey(bytes('{"Items":[],"LastEvaluatedKey":{"pk":{"S":"x"}'))).toBeUndefined();
  });

  it("reads an item attribute of that name on a last page as a key (the bench's items have none), and the real key wherever the engine puts it", () => {
    const hostile = { ...item('A#a#C'), LastEvaluatedKey: { M: { pk: { S: 'T#t#A' }, sk: { S: 'A#0#C' } } } };
    expect(cutNextKey(bytes(answer([hostile], undefined, false)))).toEqual({ M: { pk: { S: 'T#t#A' }, sk: { S: 'A#0#C' } } });
    // With a real key on the page, the real one is found in both orders.
    expect(cutNextKey(bytes(answer([hostile], key, false)))).toEqual(key);
    expect(cutNextKey(bytes(answer([hostile], key, true)))).toEqual(key);
  });
});
