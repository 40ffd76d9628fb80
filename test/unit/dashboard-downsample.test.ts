import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EndpointDashboard } from '../../lib/contract/schemas.js';
import { downsample } from '../../lib/dashboard/evaluate.js';
import { evaluate, metricsOf, minutesAgo, NOW, sample } from '../fixtures/dashboard.js';

/** The history of a dashboard and its downsampling into equal time buckets (lib/dashboard/downsample.ts). */

describe('Function: evaluateDashboard, history', () => {
  it('returns at most limit history samples of bucket means, each at its bucket newest time, when the window holds more samples than limit', () => {
    // Prepare: a 60-minute window in 4 buckets of 15 minutes: [60,45) [45,30) [30,15) [15,0] minutes ago.
    const windowSamples = [
      sample(58, 10, 20, null),
      sample(50, 20, null, null), // bucket 1: cpu mean 15, memory only 20, disk all null
      sample(40, 1, 1, 1), // bucket 2: one sample, passed as its own mean
      // bucket 3 (30 to 15 minutes ago) is empty and gives no sample
      sample(14, 33.333, 0, 50),
      sample(5, 33.333, 0, null),
      sample(0, 33.335, 0, 70), // exactly now: the last bucket is closed at the window end
    ];

    // Act
    const dashboard = evaluate({ windowSamples, limit: 4 });

    // Assess
    expect(dashboard.history).toStrictEqual([
      { observed_at: minutesAgo(50), cpu: 15, memory: 20, disk: null },
      { observed_at: minutesAgo(40), cpu: 1, memory: 1, disk: 1 },
      { observed_at: minutesAgo(0), cpu: 33.33, memory: 0, disk: 60 },
    ]);
    // The metrics still come from the newest raw sample, not from a bucket mean.
    expect(metricsOf(dashboard)).toStrictEqual([
      ['cpu', 33.335, 'ok'],
      ['memory', 0, 'ok'],
      ['disk', 70, 'ok'],
    ]);
  });

  it('returns the history unchanged when the window holds exactly limit samples', () => {
    // Prepare
    const windowSamples = [sample(3, 12.345, null, 0), sample(2, 84.999, 1, 2), sample(1, 7, 8, 9)];

    // Act
    const dashboard = evaluate({ windowSamples, limit: 3 });

    // Assess
    expect(dashboard.history).toStrictEqual(windowSamples);
  });
});

describe('Function: downsample', () => {
  const windowStart = new Date(NOW.getTime() - 60 * 60_000);

  it('returns the samples oldest first when they arrive out of order', () => {
    // Prepare
    const samples = [sample(1, 1), sample(3, 3), sample(2, 2)];

    // Act
    const history = downsample(samples, 10, windowStart, NOW);

    // Assess
    expect(history.map((s) => s.cpu)).toStrictEqual([3, 2, 1]);
  });

  it('returns one sample per bucket with a sample on a bucket edge in the later bucket', () => {
    // Prepare: 2 buckets of 30 minutes; 30 minutes ago is the start of the second.
    const samples = [sample(60, 10), sample(30, 20), sample(0, 40)];

    // Act
    const history = downsample(samples, 2, windowStart, NOW);

    // Assess
    expect(history).toStrictEqual([
      { observed_at: minutesAgo(60), cpu: 10, memory: 10, disk: 10 },
      { observed_at: minutesAgo(0), cpu: 30, memory: 30, disk: 30 },
    ]);
  });

  it.each([0, -1, 1.5, Number.NaN])('throws a RangeError when the limit is %s', (limit) => {
    expect(() => downsample([sample(1, 1)], limit, windowStart, NOW)).toThrow(RangeError);
  });

  it('throws a RangeError when the window ends before it starts', () => {
    expect(() => downsample([sample(1, 1)], 1, NOW, windowStart)).toThrow(RangeError);
  });

  describe('properties', () => {
    const SPAN_MS = 60 * 60_000;
    const metric = fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: null });
    const samplesArb = fc.array(fc.record({ offsetMs: fc.integer({ min: 0, max: SPAN_MS }), cpu: metric, memory: metric, disk: metric }), {
      maxLength: 300,
    });
    const toRecords = (raw: Array<{ offsetMs: number; cpu: number | null; memory: number | null; disk: number | null }>) =>
      raw
        .map(({ offsetMs, ...values }) => ({ observed_at: new Date(windowStart.getTime() + offsetMs).toISOString(), ...values }))
        .sort((a, b) => Date.parse(a.observed_at) - Date.parse(b.observed_at));

    it('returns at most limit samples, oldest first, all valid, and never a value from all-null inputs', () => {
      fc.assert(
        fc.property(samplesArb, fc.integer({ min: 1, max: 50 }), (raw, limit) => {
          // Prepare
          const samples = toRecords(raw);

          // Act
          const history = downsample(samples, limit, windowStart, NOW);

          // Assess
          expect(history.length).toBeLessThanOrEqual(limit);
          expect(history.length).toBeLessThanOrEqual(samples.length);
          if (samples.length > 0) expect(history.length).toBeGreaterThan(0);
          for (let i = 1; i < history.length; i++) {
            expect(Date.parse(history[i]!.observed_at)).toBeGreaterThanOrEqual(Date.parse(history[i - 1]!.observed_at));
          }
          for (const entry of history) expect(() => EndpointDashboard.shape.history.parse([entry])).not.toThrow();
          for (const key of ['cpu', 'memory', 'disk'] as const) {
            const given = samples.map((s) => s[key]).filter((v): v is number => v !== null);
            const got = history.map((s) => s[key]).filter((v): v is number => v !== null);
            if (given.length === 0) expect(got).toStrictEqual([]);
            // A mean (rounded to 2 decimals) never leaves the range of what was given.
            for (const v of got) {
              expect(v).toBeGreaterThanOrEqual(Math.min(...given) - 0.005);
              expect(v).toBeLessThanOrEqual(Math.max(...given) + 0.005);
            }
          }
        }),
      );
    });

    it('returns the samples unchanged when there are at most limit of them', () => {
      fc.assert(
        fc.property(samplesArb, (raw) => {
          const samples = toRecords(raw);
          expect(downsample(samples, Math.max(1, samples.length), windowStart, NOW)).toStrictEqual(samples);
        }),
      );
    });
  });
});
