import { describe, expect, it } from 'vitest';
import {
  agoText,
  CONNECTION_STATES,
  isDashboard,
  isEndpointList,
  isExpired,
  percentText,
  STATUS_WORDS,
  windowText,
} from '../../lib/mcp/app/dashboard-text.js';

/** The words of the MCP App view (lib/mcp/app/dashboard-text.ts), with a fixed clock. */

const NOW = Date.parse('2026-11-26T12:00:00.000Z');

describe('Module: lib/mcp/app/dashboard-text.ts', () => {
  it.each([
    [null, 'unknown'],
    [0, '0%'],
    [42, '42%'],
    [86.94, '86.9%'],
    [100, '100%'],
  ])('reads the value %s as "%s" (null is unknown, a reported 0 is 0%%)', (value, text) => {
    expect(percentText(value)).toBe(text);
  });

  it('has a word for every status', () => {
    expect(STATUS_WORDS).toEqual({ ok: 'OK', warning: 'Warning', critical: 'Critical', unknown: 'Unknown' });
  });

  it.each([
    ['2026-11-26T11:59:59.000Z', true],
    ['2026-11-26T12:00:00.000Z', true],
    ['2026-11-26T12:00:01.000Z', false],
    [null, false],
  ])('takes an observation that expires at %s as expired: %s', (expiresAt, expired) => {
    expect(isExpired({ expires_at: expiresAt }, NOW)).toBe(expired);
  });

  it.each([
    ['2026-11-26T11:59:30.000Z', 'just now'],
    ['2026-11-26T11:48:00.000Z', '12 min ago'],
    ['2026-11-26T09:00:00.000Z', '3 h ago'],
    ['2026-11-23T12:00:00.000Z', '3 days ago'],
    ['2026-11-26T12:05:00.000Z', 'in the future'],
  ])('says how long ago %s was: %s', (iso, text) => {
    expect(agoText(iso, NOW)).toBe(text);
  });

  it.each([
    [5, 'the last 5 minutes'],
    [60, 'the last 60 minutes'],
    [360, 'the last 6 hours'],
    [1440, 'the last 24 hours'],
    [10080, 'the last 7 days'],
  ])('names a window of %s minutes "%s"', (minutes, text) => {
    expect(windowText(minutes)).toBe(text);
  });

  it('draws only a result that is an endpoint dashboard', () => {
    expect(isDashboard({ schema: 'endpoint-dashboard/v1', endpoint: { id: 'a' } })).toBe(true);
    expect(isDashboard({ endpoints: [] })).toBe(false);
    expect(isDashboard({ schema: 'endpoint-dashboard/v1', endpoint: null })).toBe(false);
    expect(isDashboard(null)).toBe(false);
  });

  it('names each connection state and draws it as the status the dashboard gives it', () => {
    expect(CONNECTION_STATES).toEqual({
      connected: { word: 'Connected', status: 'ok' },
      stale: { word: 'Stale', status: 'warning' },
      disconnected: { word: 'Disconnected', status: 'warning' },
      never_connected: { word: 'Never connected', status: 'unknown' },
    });
  });

  it('draws as a table only a result that is an endpoint list', () => {
    expect(isEndpointList({ endpoints: [], matching: 0, total: 0, truncated: false })).toBe(true);
    expect(isEndpointList({ endpoints: [], truncated: 'no' })).toBe(false);
    expect(isEndpointList({ schema: 'endpoint-dashboard/v1', endpoint: { id: 'a' } })).toBe(false);
  });
});
