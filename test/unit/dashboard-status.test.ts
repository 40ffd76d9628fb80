import { describe, expect, it } from 'vitest';
import type { Status } from '../../lib/contract/schemas.js';
import { DEFAULT_THRESHOLDS, statusOf, worstStatus } from '../../lib/dashboard/evaluate.js';

/** Statuses: one value against thresholds, and the worst of several (lib/dashboard/status.ts). */

describe('Function: statusOf', () => {
  it.each<{ value: number | null; status: Status }>([
    { value: null, status: 'unknown' },
    { value: 0, status: 'ok' },
    { value: 84.99, status: 'ok' },
    { value: 85, status: 'warning' },
    { value: 94.99, status: 'warning' },
    { value: 95, status: 'critical' },
    { value: 100, status: 'critical' },
  ])('returns $status when the value is $value under the default thresholds', ({ value, status }) => {
    expect(statusOf(value, DEFAULT_THRESHOLDS)).toBe(status);
  });

  it('returns critical when warning and critical are the same threshold', () => {
    expect(statusOf(90, { warning: 90, critical: 90 })).toBe('critical');
  });
});

describe('Function: worstStatus', () => {
  it.each<{ statuses: Status[]; worst: Status }>([
    { statuses: [], worst: 'ok' },
    { statuses: ['ok', 'ok'], worst: 'ok' },
    { statuses: ['ok', 'unknown'], worst: 'unknown' },
    { statuses: ['unknown', 'warning', 'ok'], worst: 'warning' },
    { statuses: ['warning', 'critical', 'unknown'], worst: 'critical' },
    { statuses: ['critical', 'ok'], worst: 'critical' },
  ])('returns $worst when the statuses are $statuses', ({ statuses, worst }) => {
    expect(worstStatus(statuses)).toBe(worst);
  });

  it('returns the worst of a non-array iterable', () => {
    expect(worstStatus(new Set<Status>(['ok', 'warning']))).toBe('warning');
  });
});
