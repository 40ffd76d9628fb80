import { describe, expect, it } from 'vitest';
import { checkFreshRun } from '../../bench/inventory.js';

/**
 * The function's CPU target is the median of its fresh instances against the floor's: a run that
 * failed, was cut short or was not read would lower that median, so each run is held to the floor's
 * run of its round before it counts.
 */
describe("Bench: a fresh instance's run held to the CPU floor's answer", () => {
  const floor = { bytes: 1_000_000 };
  const complete = { status: 200, bytes: 1_000_000, cpuMs: 2_000 };

  it('counts a complete 200 answer with a CPU reading, its bytes within 1% of the floor’s (an agent turned stale between the two)', () => {
    expect(() => checkFreshRun('gzip', complete, floor)).not.toThrow();
    expect(() => checkFreshRun('br', { ...complete, bytes: 1_009_000 }, floor)).not.toThrow();
    expect(() => checkFreshRun('br', { ...complete, bytes: 991_000 }, floor)).not.toThrow();
  });

  it('stops the bench on an answer that was not a 200, or failed mid-stream', () => {
    expect(() => checkFreshRun('gzip', { ...complete, status: 500 }, floor)).toThrow('a fresh inventory instance (gzip) answered 500');
    expect(() => checkFreshRun('br', { ...complete, bytes: 400_000, failedWith: 'Runtime.ExitError' }, floor)).toThrow(
      'a fresh inventory instance (br) answered 200, then failed mid-stream: Runtime.ExitError',
    );
  });

  it('stops the bench on a run without a CPU reading (the pool never saw its answer complete)', () => {
    expect(() => checkFreshRun('gzip', { ...complete, cpuMs: 0 }, floor)).toThrow('a fresh inventory instance (gzip) has no CPU reading');
  });

  it('stops the bench on an answer more than 1% away from the floor’s', () => {
    expect(() => checkFreshRun('gzip', { ...complete, bytes: 1_011_000 }, floor)).toThrow(
      "a fresh inventory instance (gzip) sent 1,011,000 B, the CPU floor's answer is 1,000,000 B: more than 1% apart",
    );
    expect(() => checkFreshRun('gzip', { ...complete, bytes: 989_000 }, floor)).toThrow('more than 1% apart');
  });
});
