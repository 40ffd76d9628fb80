import { describe, expect, it } from 'vitest';
import type { Status } from '../../lib/contract/schemas.js';
import { type DashboardInput, evaluateDashboard } from '../../lib/dashboard/evaluate.js';
import {
  BASE_INPUT,
  DEFAULT_DETAIL,
  DEFAULT_POLICY_DESCRIPTION,
  evaluate,
  findingsOf,
  HEARTBEAT,
  input,
  NOW,
  sample,
} from '../fixtures/dashboard.js';

/** evaluateDashboard as a whole: the dashboard served for an endpoint in each state, its overall status, its inputs left alone. */

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
