import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ConnectionState, type DashboardFinding, EndpointDashboard, type Status } from '../../lib/contract/schemas.js';
import {
  type DashboardInput,
  DEFAULT_THRESHOLDS,
  downsample,
  evaluateDashboard,
  statusOf,
  worstStatus,
} from '../../lib/dashboard/evaluate.js';
import type { SampleRecord, TenantPolicy } from '../../lib/store/records.js';

// A fixed clock: every expectation below is computed from it.
const NOW = new Date('2025-06-01T12:00:00.000Z');
const HEARTBEAT = '2025-06-01T11:59:30.000Z';

function minutesAgo(minutes: number): string {
  return new Date(NOW.getTime() - minutes * 60_000).toISOString();
}

function sample(minutes: number, cpu: number | null, memory: number | null = cpu, disk: number | null = cpu): SampleRecord {
  return { observed_at: minutesAgo(minutes), cpu, memory, disk };
}

const BASE_INPUT: DashboardInput = {
  endpoint: { id: 'agent-1', hostname: 'ws-001', os: 'windows', client_name: 'Acme', last_heartbeat: HEARTBEAT },
  connectionState: 'connected',
  windowSamples: [sample(2, 10, 20, 30), sample(1, 40, 50, 60)],
  newestEver: null,
  policy: { ticket: 'optional', scope: 'optional', thresholds: {} },
  minutes: 60,
  limit: 100,
  now: NOW,
  observationTtlSeconds: 600,
  onlineGraceSeconds: 120,
};

/** A fresh input per test: the base fixture cloned, then the test's changes on top. */
function input(overrides: Partial<DashboardInput> = {}): DashboardInput {
  return { ...structuredClone(BASE_INPUT), ...structuredClone(overrides) };
}

/** Evaluates and checks the result against the wire schema, as the handler will serve it. */
function evaluate(overrides: Partial<DashboardInput> = {}): EndpointDashboard {
  const dashboard = evaluateDashboard(input(overrides));
  expect(() => EndpointDashboard.parse(dashboard)).not.toThrow();
  return dashboard;
}

const DEFAULT_DETAIL = 'warning at 85%, critical at 95% (default thresholds)';
const DEFAULT_POLICY_DESCRIPTION =
  'Values are percent used, from 0 to 100. ' +
  'Thresholds: CPU usage warning at 85%, critical at 95% (default thresholds); ' +
  'Memory usage warning at 85%, critical at 95% (default thresholds); ' +
  'Disk usage warning at 85%, critical at 95% (default thresholds). ' +
  "A value at or above a threshold takes that threshold's status; a metric that was not reported is unknown, never healthy. " +
  'An observation expires 600 seconds after it was observed. ' +
  'An endpoint counts as connected while its last heartbeat is within the online grace of 120 seconds. ' +
  'A ticket is optional to read observations.';

const metricsOf = (d: EndpointDashboard) => d.metrics?.map((m) => [m.key, m.value, m.status]);
const findingsOf = (d: EndpointDashboard) => d.findings?.map((f) => [f.scope, f.label, f.status]);

describe('Function: evaluateDashboard', () => {
  it('returns an ok dashboard with every field when a connected endpoint reported healthy values', () => {
    // Prepare
    const overrides = {};

    // Act
    const dashboard = evaluate(overrides);

    // Assess
    expect(dashboard).toStrictEqual({
      schema: 'endpoint-dashboard/v1',
      endpoint: { id: 'agent-1', hostname: 'ws-001', os: 'windows', client_name: 'Acme', last_heartbeat: HEARTBEAT },
      evaluated_at: '2025-06-01T12:00:00.000Z',
      observed_at: '2025-06-01T11:59:00.000Z',
      expires_at: '2025-06-01T12:09:00.000Z',
      window_minutes: 60,
      status: 'ok',
      metrics: [
        { key: 'cpu', label: 'CPU usage', value: 40, status: 'ok', detail: `CPU usage is 40%; ${DEFAULT_DETAIL}.` },
        { key: 'memory', label: 'Memory usage', value: 50, status: 'ok', detail: `Memory usage is 50%; ${DEFAULT_DETAIL}.` },
        { key: 'disk', label: 'Disk usage', value: 60, status: 'ok', detail: `Disk usage is 60%; ${DEFAULT_DETAIL}.` },
      ],
      history: [
        { observed_at: '2025-06-01T11:58:00.000Z', cpu: 10, memory: 20, disk: 30 },
        { observed_at: '2025-06-01T11:59:00.000Z', cpu: 40, memory: 50, disk: 60 },
      ],
      findings: [],
      policy_description: DEFAULT_POLICY_DESCRIPTION,
    });
  });

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

  it('returns unknown metrics, an empty history and one observation finding when the window is empty but older samples exist', () => {
    // Prepare
    const older = sample(180, 99, 99, 99);

    // Act
    const dashboard = evaluate({ windowSamples: [], newestEver: older });

    // Assess
    expect(dashboard).toStrictEqual({
      schema: 'endpoint-dashboard/v1',
      endpoint: BASE_INPUT.endpoint,
      evaluated_at: NOW.toISOString(),
      observed_at: null,
      expires_at: null,
      window_minutes: 60,
      status: 'unknown',
      metrics: [
        {
          key: 'cpu',
          label: 'CPU usage',
          value: null,
          status: 'unknown',
          detail: `CPU usage: no sample in the last 60 minutes; ${DEFAULT_DETAIL}.`,
        },
        {
          key: 'memory',
          label: 'Memory usage',
          value: null,
          status: 'unknown',
          detail: `Memory usage: no sample in the last 60 minutes; ${DEFAULT_DETAIL}.`,
        },
        {
          key: 'disk',
          label: 'Disk usage',
          value: null,
          status: 'unknown',
          detail: `Disk usage: no sample in the last 60 minutes; ${DEFAULT_DETAIL}.`,
        },
      ],
      history: [],
      findings: [
        {
          scope: 'observation',
          label: 'No sample in the window',
          detail: 'The endpoint reported no sample in the last 60 minutes; its newest sample was observed at 2025-06-01T09:00:00.000Z.',
          status: 'unknown',
        },
      ],
      policy_description: DEFAULT_POLICY_DESCRIPTION,
    });
  });

  it('returns null metrics and history and a never-reported finding when the endpoint never reported', () => {
    // Prepare
    const overrides = { windowSamples: [], newestEver: null };

    // Act
    const dashboard = evaluate(overrides);

    // Assess
    expect(dashboard).toStrictEqual({
      schema: 'endpoint-dashboard/v1',
      endpoint: BASE_INPUT.endpoint,
      evaluated_at: NOW.toISOString(),
      observed_at: null,
      expires_at: null,
      window_minutes: 60,
      status: 'unknown',
      metrics: null,
      history: null,
      findings: [
        {
          scope: 'observation',
          label: 'Never reported',
          detail: 'The endpoint has not reported any sample within retention, so its health is unknown.',
          status: 'unknown',
        },
      ],
      policy_description: DEFAULT_POLICY_DESCRIPTION,
    });
  });

  it('returns an expired-observation finding but keeps the values when the newest sample is older than the TTL', () => {
    // Prepare: observed 11 minutes ago, TTL 10 minutes.
    const windowSamples = [sample(11, 40, 50, 60)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(dashboard.observed_at).toBe('2025-06-01T11:49:00.000Z');
    expect(dashboard.expires_at).toBe('2025-06-01T11:59:00.000Z');
    expect(metricsOf(dashboard)).toStrictEqual([
      ['cpu', 40, 'ok'],
      ['memory', 50, 'ok'],
      ['disk', 60, 'ok'],
    ]);
    expect(dashboard.findings).toStrictEqual([
      {
        scope: 'observation',
        label: 'Observation expired',
        detail:
          'The newest sample was observed at 2025-06-01T11:49:00.000Z and expired at 2025-06-01T11:59:00.000Z, before this evaluation at 2025-06-01T12:00:00.000Z; its values may no longer hold.',
        status: 'unknown',
      },
    ]);
    expect(dashboard.status).toBe('unknown');
  });

  it.each([
    { case: 'expires exactly now', minutes: 10, expired: false },
    { case: 'expired a millisecond ago', minutes: 10 + 1 / 60_000, expired: true },
    { case: 'expires in a minute', minutes: 9, expired: false },
  ])('returns an expired finding only when the sample $case', ({ minutes, expired }) => {
    // Prepare
    const windowSamples = [sample(minutes, 1)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(findingsOf(dashboard)).toStrictEqual(expired ? [['observation', 'Observation expired', 'unknown']] : []);
    expect(dashboard.status).toBe(expired ? 'unknown' : 'ok');
  });

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

  it('returns findings worst first, then connectivity, observation, metric, then cpu, memory, disk', () => {
    // Prepare: stale (warning), expired (unknown), cpu not reported (unknown), memory warning, disk critical.
    const windowSamples = [sample(30, null, 90, 99)];

    // Act
    const dashboard = evaluate({ connectionState: 'stale', windowSamples });

    // Assess
    expect(findingsOf(dashboard)).toStrictEqual([
      ['metric', 'Disk usage critical', 'critical'],
      ['connectivity', 'Endpoint connection stale', 'warning'],
      ['metric', 'Memory usage high', 'warning'],
      ['observation', 'Observation expired', 'unknown'],
      ['metric', 'CPU usage not reported', 'unknown'],
    ]);
    expect(dashboard.status).toBe('critical');
  });

  it('returns metric findings in cpu, memory, disk order when they share a status', () => {
    // Prepare
    const windowSamples = [sample(1, 96, 97, 98)];

    // Act
    const dashboard = evaluate({ windowSamples });

    // Assess
    expect(findingsOf(dashboard)).toStrictEqual([
      ['metric', 'CPU usage critical', 'critical'],
      ['metric', 'Memory usage critical', 'critical'],
      ['metric', 'Disk usage critical', 'critical'],
    ]);
  });

  it.each<{ state: ConnectionState; heartbeat: string | null; finding: DashboardFinding | null; status: Status }>([
    { state: 'connected', heartbeat: HEARTBEAT, finding: null, status: 'ok' },
    {
      state: 'stale',
      heartbeat: '2025-06-01T11:50:00.000Z',
      finding: {
        scope: 'connectivity',
        label: 'Endpoint connection stale',
        detail:
          'The agent is connected to the broker but its last heartbeat (2025-06-01T11:50:00.000Z) is older than the 120-second online grace.',
        status: 'warning',
      },
      status: 'warning',
    },
    {
      state: 'stale',
      heartbeat: null,
      finding: {
        scope: 'connectivity',
        label: 'Endpoint connection stale',
        detail: 'The agent is connected to the broker but has sent no heartbeat.',
        status: 'warning',
      },
      status: 'warning',
    },
    {
      state: 'disconnected',
      heartbeat: '2025-06-01T11:00:00.000Z',
      finding: {
        scope: 'connectivity',
        label: 'Endpoint disconnected',
        detail: 'The agent disconnected from the broker; its last heartbeat was at 2025-06-01T11:00:00.000Z.',
        status: 'warning',
      },
      status: 'warning',
    },
    {
      state: 'disconnected',
      heartbeat: null,
      finding: {
        scope: 'connectivity',
        label: 'Endpoint disconnected',
        detail: 'The agent disconnected from the broker; no heartbeat was ever recorded.',
        status: 'warning',
      },
      status: 'warning',
    },
    {
      state: 'never_connected',
      heartbeat: null,
      finding: {
        scope: 'connectivity',
        label: 'Endpoint never connected',
        detail: 'The agent has never connected to the broker, so its current state is unknown.',
        status: 'unknown',
      },
      status: 'unknown',
    },
  ])('returns a $status dashboard when the connection state is $state (heartbeat $heartbeat)', ({ state, heartbeat, finding, status }) => {
    // Prepare
    const endpoint = { ...BASE_INPUT.endpoint, last_heartbeat: heartbeat };

    // Act
    const dashboard = evaluate({ connectionState: state, endpoint });

    // Assess
    expect(dashboard.findings).toStrictEqual(finding ? [finding] : []);
    expect(dashboard.status).toBe(status);
    expect(dashboard.endpoint).toStrictEqual(endpoint);
  });

  it.each<{ case: string; overrides: Partial<DashboardInput>; status: Status }>([
    { case: 'healthy and connected', overrides: {}, status: 'ok' },
    { case: 'a metric is missing', overrides: { windowSamples: [sample(1, null, 1, 1)] }, status: 'unknown' },
    {
      case: 'a metric is missing and the endpoint is disconnected',
      overrides: { connectionState: 'disconnected', windowSamples: [sample(1, null, 1, 1)] },
      status: 'warning',
    },
    {
      case: 'a metric is critical and the endpoint never connected',
      overrides: { connectionState: 'never_connected', windowSamples: [sample(1, 95, 1, 1)] },
      status: 'critical',
    },
    {
      case: 'the endpoint never reported and never connected',
      overrides: { connectionState: 'never_connected', windowSamples: [], newestEver: null },
      status: 'unknown',
    },
    {
      case: 'the endpoint never reported but is disconnected',
      overrides: { connectionState: 'disconnected', windowSamples: [], newestEver: null },
      status: 'warning',
    },
  ])('returns status $status when $case', ({ overrides, status }) => {
    // Act
    const dashboard = evaluate(overrides);

    // Assess
    expect(dashboard.status).toBe(status);
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

  it('returns the window, TTL and grace given when they differ from the defaults', () => {
    // Prepare
    const overrides = { minutes: 5, observationTtlSeconds: 30, onlineGraceSeconds: 45, windowSamples: [sample(1, 1)] };

    // Act
    const dashboard = evaluate(overrides);

    // Assess
    expect(dashboard.window_minutes).toBe(5);
    expect(dashboard.expires_at).toBe('2025-06-01T11:59:30.000Z');
    expect(findingsOf(dashboard)).toStrictEqual([['observation', 'Observation expired', 'unknown']]);
    expect(dashboard.policy_description).toContain('An observation expires 30 seconds after it was observed.');
    expect(dashboard.policy_description).toContain('within the online grace of 45 seconds.');
  });

  it('does not change its input', () => {
    // Prepare
    const given = input({ windowSamples: [sample(3, 1), sample(2, 2), sample(1, 3)], limit: 2 });
    const before = structuredClone(given);

    // Act
    evaluateDashboard(given);

    // Assess
    expect(given).toStrictEqual(before);
  });
});

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

describe('Function: evaluateDashboard with samples that could not be read', () => {
  it('names how many samples were left out, and does not call the endpoint healthy', () => {
    const dashboard = evaluate({ unreadableSamples: 3 });

    expect(dashboard.findings).toContainEqual({
      scope: 'observation',
      label: 'Unreadable samples',
      detail:
        '3 stored samples of this endpoint could not be read (corrupt records) and are left out of the metrics and the history, so its health may be incomplete.',
      status: 'unknown',
    });
    expect(dashboard.status).toBe('unknown');
    expect(dashboard.history).toHaveLength(2);
  });

  it('never says "Never reported" when the only samples could not be read: metrics unknown, history empty', () => {
    const dashboard = evaluate({ windowSamples: [], newestEver: null, unreadableSamples: 1 });

    expect(dashboard.findings?.map((f) => f.label)).toEqual(['Unreadable samples']);
    expect(dashboard.metrics?.map((m) => [m.value, m.status])).toEqual([
      [null, 'unknown'],
      [null, 'unknown'],
      [null, 'unknown'],
    ]);
    expect(dashboard.history).toEqual([]);
  });

  it('gives no such finding when every sample was read', () => {
    expect(evaluate({ unreadableSamples: 0 }).findings?.map((f) => f.label)).not.toContain('Unreadable samples');
  });
});
