import { type DashboardSample, MetricKey } from '../contract/schemas.js';
import type { SampleRecord } from '../data-format/records.js';
import { toPercent } from './percent.js';

const METRIC_KEYS = MetricKey.options;

function timeOf(sample: { readonly observed_at: string }): number {
  return Date.parse(sample.observed_at);
}

function toDashboardSample(sample: SampleRecord): DashboardSample {
  return {
    observed_at: sample.observed_at,
    cpu: toPercent(sample.cpu),
    memory: toPercent(sample.memory),
    disk: toPercent(sample.disk),
  };
}

/** Mean of the non-null values rounded to 2 decimals; `null` when there is none (never `0`). */
function meanOf(values: ReadonlyArray<number | null>): number | null {
  let sum = 0;
  let count = 0;
  for (const value of values) {
    if (value === null) continue;
    sum += value;
    count += 1;
  }
  if (count === 0) return null;
  return Math.round((sum / count) * 100) / 100;
}

/** One sample standing for a non-empty bucket (oldest first): per-metric means, the newest time. */
function summarizeBucket(bucket: readonly DashboardSample[]): DashboardSample {
  const newest = bucket[bucket.length - 1];
  if (!newest) throw new TypeError('a bucket is summarised only when it holds a sample');
  const summary: DashboardSample = { observed_at: newest.observed_at, cpu: null, memory: null, disk: null };
  for (const key of METRIC_KEYS) summary[key] = meanOf(bucket.map((s) => s[key]));
  return summary;
}

/**
 * The history of a dashboard: the samples oldest first, at most `limit` of them.
 *
 * Invariants: the result is sorted by `observed_at` and never longer than `limit`. When there are
 * at most `limit` samples they are returned unchanged (only out-of-range values are clamped to
 * 0–100). Otherwise [windowStart, windowEnd] is cut into `limit` equal time buckets (each closed at
 * its start, the last one also at the window end) and every non-empty bucket gives one sample: per
 * metric the mean of its non-null values rounded to 2 decimals, `null` when all are null (a gap is
 * never turned into `0`), and `observed_at` = the newest sample's time in the bucket. Samples
 * outside the window fall into the nearest end bucket rather than being dropped silently.
 *
 * @throws RangeError when `limit` is not a positive integer or the window is empty.
 */
export function downsample(samples: readonly SampleRecord[], limit: number, windowStart: Date, windowEnd: Date): DashboardSample[] {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const start = windowStart.getTime();
  const span = windowEnd.getTime() - start;
  if (!(span > 0)) throw new RangeError('the window must end after it starts');

  // Each time is parsed once. The store hands samples over oldest first, so the stable sort (which
  // keeps equal times in the caller's order) runs only for input that is not already in order.
  const timed = samples.map((sample) => ({ time: timeOf(sample), sample: toDashboardSample(sample) }));
  if (timed.some((entry, i, all) => i > 0 && entry.time < (all[i - 1]?.time ?? entry.time))) timed.sort((a, b) => a.time - b.time);
  if (timed.length <= limit) return timed.map((entry) => entry.sample);

  const buckets: DashboardSample[][] = Array.from({ length: limit }, () => []);
  for (const { time, sample } of timed) {
    // Integer milliseconds multiplied before dividing: exact, so a sample on a bucket edge lands
    // in the later bucket, and one at the window end lands in the last (closed) bucket.
    const index = Math.min(limit - 1, Math.max(0, Math.floor(((time - start) * limit) / span)));
    buckets[index]?.push(sample);
  }
  return buckets.filter((bucket) => bucket.length > 0).map(summarizeBucket);
}
