import { describe, expect, it } from 'vitest';
import type { TenantPolicy } from '../../lib/data-format/records.js';
import { DEFAULT_DETAIL, evaluate, findingsOf, metricsOf, minutesAgo, sample } from '../fixtures/dashboard.js';

/** The three metrics of a dashboard: values from the newest sample, statuses by threshold (lib/dashboard/evaluate-metrics.ts, thresholds.ts, percent.ts). */

describe('Function: evaluateDashboard, metrics', () => {
  it('returns ok, not unknown, when a metric is a real 0', () => {
    // Prepare
    const windowSamples = [sample(1, 0, 0, 0)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(metricsOf(dashboard)).toStrictEqual([
      ['cpu', 0, 'ok'],
      ['memory', 0, 'ok'],
      ['disk', 0, 'ok'],
    ]);
    expect(dashboard.metrics?.[0]?.detail).toBe(`CPU usage is 0%; ${DEFAULT_DETAIL}.`);
    expect(dashboard.history).toStrictEqual([{ observed_at: minutesAgo(1), cpu: 0, memory: 0, disk: 0 }]);
    expect(dashboard.findings).toStrictEqual([]);
    expect(dashboard.status).toBe('ok');
  });

  it('returns a null value with status unknown and a metric finding when the newest sample lacks a metric', () => {
    // Prepare: memory was reported earlier but not in the newest sample, which is what counts.
    const windowSamples = [sample(2, 10, 20, 30), sample(1, 40, null, 60)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(dashboard.metrics?.[1]).toStrictEqual({
      key: 'memory',
      label: 'Memory usage',
      value: null,
      status: 'unknown',
      detail: `Memory usage was not reported in the newest sample (observed at ${minutesAgo(1)}); ${DEFAULT_DETAIL}.`,
    });
    expect(dashboard.history?.[1]).toStrictEqual({ observed_at: minutesAgo(1), cpu: 40, memory: null, disk: 60 });
    expect(dashboard.findings).toStrictEqual([
      {
        scope: 'metric',
        label: 'Memory usage not reported',
        detail: `The newest sample (observed at ${minutesAgo(1)}) has no Memory usage value; its status is unknown, not healthy.`,
        status: 'unknown',
      },
    ]);
    expect(dashboard.status).toBe('unknown');
  });

  it('returns three unknown metrics and three findings when every sample is all null', () => {
    // Prepare
    const windowSamples = [sample(3, null), sample(1, null)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(metricsOf(dashboard)).toStrictEqual([
      ['cpu', null, 'unknown'],
      ['memory', null, 'unknown'],
      ['disk', null, 'unknown'],
    ]);
    expect(dashboard.history).toStrictEqual([
      { observed_at: minutesAgo(3), cpu: null, memory: null, disk: null },
      { observed_at: minutesAgo(1), cpu: null, memory: null, disk: null },
    ]);
    expect(findingsOf(dashboard)).toStrictEqual([
      ['metric', 'CPU usage not reported', 'unknown'],
      ['metric', 'Memory usage not reported', 'unknown'],
      ['metric', 'Disk usage not reported', 'unknown'],
    ]);
    expect(dashboard.observed_at).toBe(minutesAgo(1));
    expect(dashboard.status).toBe('unknown');
  });

  it.each([
    { value: 84.99, status: 'ok' },
    { value: 85, status: 'warning' },
    { value: 94.99, status: 'warning' },
    { value: 95, status: 'critical' },
    { value: 100, status: 'critical' },
  ] as const)('returns $status when a metric is exactly $value', ({ value, status }) => {
    // Prepare
    const windowSamples = [sample(1, value, 1, 1)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(dashboard.metrics?.[0]).toMatchObject({ key: 'cpu', value, status });
    expect(dashboard.status).toBe(status);
  });

  it('returns warning and critical metric findings that name the thresholds when metrics cross them', () => {
    // Prepare
    const windowSamples = [sample(1, 85, 95, 84.99)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(dashboard.findings).toStrictEqual([
      {
        scope: 'metric',
        label: 'Memory usage critical',
        detail: 'Memory usage is 95%, at or above the critical threshold of 95%.',
        status: 'critical',
      },
      {
        scope: 'metric',
        label: 'CPU usage high',
        detail: 'CPU usage is 85%, at or above the warning threshold of 85% (critical at 95%).',
        status: 'warning',
      },
    ]);
    expect(dashboard.status).toBe('critical');
  });

  it('returns statuses and descriptions from the tenant thresholds when the policy overrides a metric', () => {
    // Prepare
    const policy: TenantPolicy = { ticket: 'required', scope: 'optional', thresholds: { disk: { warning: 80, critical: 90 } } };
    const windowSamples = [sample(1, 88, 88, 88)];

    // Act
    const dashboard = evaluate({ policy, windowSamples });

    // Assess
    expect(metricsOf(dashboard)).toStrictEqual([
      ['cpu', 88, 'warning'],
      ['memory', 88, 'warning'],
      ['disk', 88, 'warning'],
    ]);
    expect(dashboard.metrics?.[2]?.detail).toBe('Disk usage is 88%; warning at 80%, critical at 90% (tenant override).');
    expect(dashboard.policy_description).toBe(
      'Values are percent used, from 0 to 100. ' +
        'Thresholds: CPU usage warning at 85%, critical at 95% (default thresholds); ' +
        'Memory usage warning at 85%, critical at 95% (default thresholds); ' +
        'Disk usage warning at 80%, critical at 90% (tenant override). ' +
        "A value at or above a threshold takes that threshold's status; a metric that was not reported is unknown, never healthy. " +
        'An observation expires 600 seconds after it was observed. ' +
        'An endpoint counts as connected while its last heartbeat is within the online grace of 120 seconds. ' +
        "A ticket is required by the tenant's policy to read observations.",
    );
  });

  it('returns critical for a tenant threshold that is lower than the default when the value reaches it', () => {
    // Prepare
    const policy: TenantPolicy = { ticket: 'optional', scope: 'optional', thresholds: { cpu: { warning: 50, critical: 70 } } };

    // Act
    const dashboard = evaluate({ policy, windowSamples: [sample(1, 70, 70, 70)] });

    // Assess
    expect(metricsOf(dashboard)).toStrictEqual([
      ['cpu', 70, 'critical'],
      ['memory', 70, 'ok'],
      ['disk', 70, 'ok'],
    ]);
  });

  it('returns values clamped to 0–100 when a stored value is out of range', () => {
    // Prepare
    const windowSamples = [sample(1, 100.4, -0.5, 50)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(metricsOf(dashboard)).toStrictEqual([
      ['cpu', 100, 'critical'],
      ['memory', 0, 'ok'],
      ['disk', 50, 'ok'],
    ]);
    expect(dashboard.history).toStrictEqual([{ observed_at: minutesAgo(1), cpu: 100, memory: 0, disk: 50 }]);
  });
});
