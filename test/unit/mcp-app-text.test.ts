import { describe, expect, it } from 'vitest';
import {
  agoText,
  CONNECTION_STATES,
  compareVersions,
  failureForPerson,
  isExpired,
  percentText,
  readResult,
  STATUS_WORDS,
  sentenceParts,
  seriesFacts,
  seriesText,
  windowText,
} from '../../lib/mcp/app/dashboard-text.js';
import { quoted } from '../../lib/mcp/reported-text.js';
import { TOOL_SENTENCES } from '../../lib/mcp/tool-failure.js';
import { evaluate } from '../fixtures/dashboard.js';

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

  it('reads a result as a dashboard or an endpoint list only when it is one exactly as the contract says', () => {
    const dashboard = evaluate();
    const list = { endpoints: [], matching: 0, total: 0, truncated: false };

    expect(readResult(dashboard)).toEqual({ dashboard });
    expect(readResult(list)).toEqual({ list });
    expect(readResult({ schema: 'endpoint-dashboard/v1', endpoint: dashboard.endpoint })).toBeUndefined();
    expect(readResult({ ...dashboard, evaluated_at: 'yesterday' })).toBeUndefined();
    expect(readResult({ ...dashboard, metrics: dashboard.metrics?.map((m) => ({ ...m, value: 150 })) })).toBeUndefined();
    expect(readResult({ endpoints: [], truncated: 'no' })).toBeUndefined();
    expect(readResult(null)).toBeUndefined();
  });

  it('sorts versions by their numeric parts, a pre-release before its release, the build only to break a tie', () => {
    const shuffled = [
      '4.0.10',
      '4.2.1',
      '4.0.2',
      '4.2.1-rc.3+build',
      '4.0.16',
      '4.2.1-rc.10',
      'v4.0.3',
      '4.2.1+build.2',
      '4.2.1-beta',
      'nightly',
    ];

    expect([...shuffled].sort(compareVersions)).toEqual([
      '4.0.2',
      'v4.0.3',
      '4.0.10',
      '4.0.16',
      '4.2.1-beta',
      '4.2.1-rc.3+build',
      '4.2.1-rc.10',
      '4.2.1',
      '4.2.1+build.2',
      'nightly',
    ]);
  });

  it('tells a series in words: its range, its newest value and its gaps, or "no data"', () => {
    const at = (i: number) => `2026-11-26T11:${String(i).padStart(2, '0')}:00.000Z`;
    const history = [10, 20, null, 30, null, null, 80, null].map((cpu, i) => ({ observed_at: at(i), cpu, memory: null, disk: 42 }));

    expect(seriesFacts(history, 'cpu')).toEqual({ min: 10, max: 80, newest: 80, gaps: 3 });
    expect(seriesText('CPU', seriesFacts(history, 'cpu'))).toBe('CPU: 10% to 80%, newest 80%, 3 gaps');
    expect(seriesText('Memory', seriesFacts(history, 'memory'))).toBe('Memory: no data');
    expect(seriesText('Disk', seriesFacts(history, 'disk'))).toBe('Disk: 42%, newest 42%, no gaps');
    expect(seriesText('CPU', seriesFacts([], 'cpu'))).toBe('CPU: no data');
  });

  it("cuts a sentence of the service's into its words, its times and the values it quotes (read back from their code spans)", () => {
    const text = `Endpoint ${quoted('admin\u202Egnp')} (hostname ${quoted('a`b')}): observed at 2026-11-26T11:48:00.000Z, expired at 2026-11-26T11:58:00Z.`;

    expect(sentenceParts(text)).toEqual([
      'Endpoint ',
      { reported: 'admin\u202Egnp' },
      ' (hostname ',
      { reported: 'a`b' },
      '): observed at ',
      { time: '2026-11-26T11:48:00.000Z' },
      ', expired at ',
      { time: '2026-11-26T11:58:00Z' },
      '.',
    ]);
    // A time inside a reported value is the value's, and a date that is no date stays words.
    expect(sentenceParts(`${quoted('2026-11-26T11:48:00Z')} at 2026-13-45T99:99Z`)).toEqual([
      { reported: '2026-11-26T11:48:00Z' },
      ' at 2026-13-45T99:99Z',
    ]);
  });

  it("says the tool's ticket-required sentence, written for a model, as what the person does; the other sentences stay the tool's", () => {
    expect(failureForPerson(TOOL_SENTENCES.ticketRequired('ServiceNow'))).toBe(
      'Nothing was read: this tenant requires a ticket for every read. Give the number of your ServiceNow ticket (such as INC0012345) and read again.',
    );
    expect(failureForPerson(`${TOOL_SENTENCES.ticketRequired('Jira')} (request id: 3f2a)`)).toBe(
      'Nothing was read: this tenant requires a ticket for every read. Give the number of your Jira ticket (such as INC0012345) and read again. (request id: 3f2a)',
    );
    for (const sentence of [
      TOOL_SENTENCES.notFound('ac-1'),
      TOOL_SENTENCES.signInAgain,
      TOOL_SENTENCES.unavailable('observations service', 5),
    ]) {
      expect(failureForPerson(sentence)).toBeUndefined();
    }
  });

  it('names each connection state and draws it as the status the dashboard gives it', () => {
    expect(CONNECTION_STATES).toEqual({
      connected: { word: 'Connected', status: 'ok' },
      stale: { word: 'Stale', status: 'warning' },
      disconnected: { word: 'Disconnected', status: 'warning' },
      never_connected: { word: 'Never connected', status: 'unknown' },
    });
  });
});
