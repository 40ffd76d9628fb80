import { describe, expect, it } from 'vitest';
import type { ConnectionState, DashboardFinding, Status } from '../../lib/contract/schemas.js';
import { BASE_INPUT, evaluate, findingsOf, HEARTBEAT, metricsOf, sample } from '../fixtures/dashboard.js';

/** The findings of a dashboard: connectivity, observation and metric problems, in their order (lib/dashboard/findings.ts). */

describe('Function: evaluateDashboard, findings', () => {
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
