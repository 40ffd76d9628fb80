import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentSummary } from '../../lib/contract/schemas.js';
import { normaliseTime, type RawItem, readConnectionRecord, readDurableRecord, readSampleRecord } from '../../lib/data-format/records.js';

/** An item in DynamoDB's wire form, as the low-level client returns it. */
function item(fields: Record<string, string | number | null>): RawItem {
  const out: RawItem = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v === null ? { NULL: true } : typeof v === 'number' ? { N: String(v) } : { S: v };
  return out;
}

const hello = { agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' };

describe('Module: records', () => {
  it('reads stored nulls and empty strings as absent, and normalises times to UTC', () => {
    const parsed = readDurableRecord(
      item({
        pk: 'T#acme#AGENTS',
        sk: 'A#a-1#D',
        kind: 'agent',
        ...hello,
        client_id: null,
        update_ring: '',
        enrolled_at: '2026-01-01T01:00:00+01:00',
      }),
    );

    expect(parsed).toEqual({
      ...hello,
      client_id: undefined,
      client_name: undefined,
      enrolled_at: '2026-01-01T00:00:00.000Z',
      update_ring: undefined,
      last_heartbeat: undefined,
    });
  });

  it('rejects, without throwing, a record whose timestamp cannot be read', () => {
    expect(readSampleRecord(item({ observed_at: 'yesterday', cpu: 1 }))).toBeUndefined();
    expect(readConnectionRecord(item({ ...hello, state: 'connected', connected_at: 'soon' }))).toBeUndefined();
    // The canonical shape with an impossible date is not "fixed" into March.
    expect(readDurableRecord(item({ ...hello, last_heartbeat: '2026-02-30T00:00:00.000Z' }))).toBeUndefined();
  });

  it('keeps a real 0 and reads a missing metric as null, never 0', () => {
    expect(readSampleRecord(item({ observed_at: '2026-01-01T00:00:00Z', cpu: 0 }))).toEqual({
      observed_at: '2026-01-01T00:00:00.000Z',
      cpu: 0,
      memory: null,
      disk: null,
    });
  });

  it.each([
    ['an empty arch', { arch: '' }],
    ['a missing hostname', { hostname: null }],
    ['an agent_id of 129 characters', { agent_id: 'x'.repeat(129) }],
    ['a numeric version', { version: 2 }],
    ['a client_id of the wrong type', { client_id: 7 }],
  ])('cannot read a durable record with %s', (_what, change) => {
    expect(readDurableRecord(item({ ...hello, ...change }))).toBeUndefined();
  });

  it('accepts an agent_id of 128 characters, counted as code points (128 emoji are 256 UTF-16 units)', () => {
    expect(readDurableRecord(item({ ...hello, agent_id: '😀'.repeat(128) }))?.agent_id).toHaveLength(256);
    expect(readDurableRecord(item({ ...hello, agent_id: '😀'.repeat(129) }))).toBeUndefined();
  });

  it('cannot read a connection record whose state is neither connected nor disconnected, or a sample with a text metric', () => {
    expect(readConnectionRecord(item({ ...hello, state: 'online' }))).toBeUndefined();
    expect(readSampleRecord({ observed_at: { S: '2026-01-01T00:00:00.000Z' }, cpu: { S: '12' } })).toBeUndefined();
  });

  it('reads every record the contract can carry, and every record it reads passes the contract (fast-check)', () => {
    const text = fc.string({ minLength: 1, maxLength: 20 });
    const time = fc.oneof(
      fc
        .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
        .map((d) => d.toISOString()),
      fc.string({ maxLength: 26 }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 0, maxLength: 140 }), text, time, time, (agentId, hostname, enrolled, heartbeat) => {
        const record = readDurableRecord(item({ ...hello, agent_id: agentId, hostname, enrolled_at: enrolled, last_heartbeat: heartbeat }));
        if (!record) return;
        const summary = {
          ...hello,
          agent_id: record.agent_id,
          hostname: record.hostname,
          is_online: false,
          connection_state: 'never_connected',
        };
        expect(
          AgentSummary.safeParse({
            ...summary,
            ...(record.enrolled_at ? { enrolled_at: record.enrolled_at } : {}),
            ...(record.last_heartbeat ? { last_heartbeat: record.last_heartbeat } : {}),
          }).success,
        ).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('normalises every time Date can write to the same fixed-width string, so times compare as strings', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
        (d) => {
          expect(normaliseTime(d.toISOString())).toBe(d.toISOString());
          expect(normaliseTime(d.toISOString().replace('Z', '+00:00'))).toBe(d.toISOString());
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
