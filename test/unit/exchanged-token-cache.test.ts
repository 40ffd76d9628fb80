import { describe, expect, it } from 'vitest';
import { type ExchangedToken, ExchangedTokenCache } from '../../lib/auth/token-exchange.js';

/** An exchange the test settles by hand (a stand-in for the token endpoint, to hold calls in flight). */
function heldExchange(): {
  run: () => Promise<ExchangedToken>;
  calls: () => number;
  settle: (t: ExchangedToken) => void;
  fail: (e: Error) => void;
} {
  let calls = 0;
  let settle: (t: ExchangedToken) => void = () => undefined;
  let fail: (e: Error) => void = () => undefined;
  return {
    run: () => {
      calls += 1;
      return new Promise<ExchangedToken>((resolve, reject) => {
        settle = resolve;
        fail = reject;
      });
    },
    calls: () => calls,
    settle: (t) => settle(t),
    fail: (e) => fail(e),
  };
}

describe('Class: ExchangedTokenCache', () => {
  const signal = new AbortController().signal;

  it('makes one exchange for calls that need the same token at the same time (single flight)', async () => {
    const cache = new ExchangedTokenCache();
    const exchange = heldExchange();

    // Fifty invocations at once, each with its own deadline's signal, as on a busy warm instance.
    const waiting = Array.from({ length: 50 }, () =>
      cache.obtain('user-token', 'obs', exchange.run, { signal: new AbortController().signal }),
    );
    exchange.settle({ token: 'exchanged', expiresAt: Date.now() + 300_000 });
    const results = await Promise.all(waiting);

    expect(exchange.calls()).toBe(1);
    expect(new Set(results.map((r) => r.token))).toEqual(new Set(['exchanged']));
    expect(await cache.obtain('user-token', 'obs', exchange.run, { signal })).toEqual({ token: 'exchanged', cached: true });
  });

  it("keeps a token no longer than the user's token, when that expires first", () => {
    const start = Date.now();
    let now = start;
    const cache = new ExchangedTokenCache(500, 30_000, () => now);

    cache.set('user-token', 'obs', { token: 'exchanged', expiresAt: start + 300_000 }, start + 40_000);
    const atOnce = cache.get('user-token', 'obs');
    now = start + 10_001; // 40 s less the 30 s margin, and past it
    const later = cache.get('user-token', 'obs');

    expect(atOnce).toBe('exchanged');
    expect(later).toBeUndefined();
  });

  it('keeps no failed exchange: the next call tries again', async () => {
    const cache = new ExchangedTokenCache();
    const exchange = heldExchange();

    const first = cache.obtain('user-token', 'obs', exchange.run, { signal });
    exchange.fail(new Error('issuer down'));
    await expect(first).rejects.toThrow('issuer down');
    const second = cache.obtain('user-token', 'obs', exchange.run, { signal });
    exchange.settle({ token: 'later', expiresAt: Date.now() + 300_000 });

    expect(await second).toEqual({ token: 'later', cached: false });
    expect(exchange.calls()).toBe(2);
  });

  it('lets one waiter stop at its own deadline without failing the others', async () => {
    const cache = new ExchangedTokenCache();
    const exchange = heldExchange();
    const impatient = new AbortController();

    const gaveUp = cache.obtain('user-token', 'obs', exchange.run, { signal: impatient.signal });
    const patient = cache.obtain('user-token', 'obs', exchange.run, { signal });
    impatient.abort(new Error('deadline'));
    exchange.settle({ token: 'exchanged', expiresAt: Date.now() + 300_000 });

    await expect(gaveUp).rejects.toThrow('deadline');
    expect(await patient).toEqual({ token: 'exchanged', cached: false });
  });
});
