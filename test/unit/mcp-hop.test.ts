import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExchangedTokenCache } from '../../lib/auth/token-exchange.js';
import { decodedReason, encodedReasonHeaders } from '../../lib/contract/attribution.js';
import { retryAfterSeconds } from '../../lib/mcp/tool-failure.js';

describe('Function: encodedReasonHeaders / decodedReason', () => {
  it('gives back any well-formed text exactly, whatever its script, line breaks or surrounding spaces', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }), (reason) => {
        const headers = encodedReasonHeaders(reason);
        // What crosses the hop is plain ASCII, which every HTTP client sends as is.
        expect(headers['X-Service-Reason']).toMatch(/^[\x21-\x7e]*$/);
        expect(decodedReason(headers['X-Service-Reason'], headers['X-Service-Reason-Encoding'])).toBe(reason);
      }),
      { numRuns: 500 },
    );
  });

  it('takes a value without the encoding header literally, a stray % included', () => {
    expect(decodedReason('100% full', undefined)).toBe('100% full');
    expect(decodedReason(undefined, 'percent')).toBeUndefined();
  });

  it.each([
    ['an unknown encoding', 'disk', 'base64'],
    ['a stray %', '100% full', 'percent'],
    ['bytes that are not UTF-8', 'caf%E9', 'percent'],
    ['a cut sequence', 'disk%E2%82', 'percent'],
  ])('refuses %s (null: the handler answers 400)', (_what, value, encoding) => {
    expect(decodedReason(value, encoding)).toBeNull();
  });
});

describe('Class: ExchangedTokenCache', () => {
  const exchanged = (token: string, expiresAt: number) => ({ token, expiresAt });

  it('serves a token until shortly before it expires, per user token and audience', () => {
    let now = 1_000;
    const cache = new ExchangedTokenCache(10, 30_000, () => now);
    cache.set('user-a', 'obs', exchanged('t1', 101_000));

    const served = [71_000, 71_001].map((at) => {
      now = at;
      return cache.get('user-a', 'obs');
    });

    expect(served).toEqual(['t1', undefined]);
    expect(cache.get('user-a', 'other-audience')).toBeUndefined();
    expect(cache.get('user-b', 'obs')).toBeUndefined();
  });

  it('keeps at most its bound, letting the oldest go first', () => {
    const cache = new ExchangedTokenCache(2, 0);
    cache.set('a', 'obs', exchanged('ta', 4e12));
    cache.set('b', 'obs', exchanged('tb', 4e12));
    cache.set('c', 'obs', exchanged('tc', 4e12));

    expect([cache.get('a', 'obs'), cache.get('b', 'obs'), cache.get('c', 'obs')]).toEqual([undefined, 'tb', 'tc']);
  });

  it('forgets a token the service refused', () => {
    const cache = new ExchangedTokenCache();
    cache.set('a', 'obs', exchanged('ta', 4e12));
    cache.forget('a', 'obs');

    expect(cache.get('a', 'obs')).toBeUndefined();
  });
});

describe('Function: retryAfterSeconds', () => {
  it.each([
    ['7', 7],
    ['0', 0],
    [null, 5],
    ['soon', 5],
    ['Wed, 21 Oct 2026 07:28:00 GMT', 5],
    ['-3', 5],
    ['99999', 5],
  ])('reads %s as %s seconds', (header, seconds) => {
    expect(retryAfterSeconds(header)).toBe(seconds);
  });
});
