import { describe, expect, it } from 'vitest';
import { ConnectionRecord, DurableRecord, SampleRecord } from '../../lib/store/records.js';

describe('Module: records', () => {
  it('reads stored nulls and empty strings as absent, and normalises times to UTC', () => {
    const parsed = DurableRecord.parse({
      pk: 'T#acme#AGENTS',
      sk: 'A#a-1#D',
      kind: 'agent',
      agent_id: 'a-1',
      hostname: 'h',
      os: 'linux',
      arch: 'x86_64',
      version: '1',
      client_id: null,
      update_ring: '',
      enrolled_at: '2026-01-01T01:00:00+01:00',
    });

    expect(parsed).toEqual({
      agent_id: 'a-1',
      hostname: 'h',
      os: 'linux',
      arch: 'x86_64',
      version: '1',
      client_id: undefined,
      client_name: undefined,
      enrolled_at: '2026-01-01T00:00:00.000Z',
      update_ring: undefined,
      last_heartbeat: undefined,
    });
  });

  it('rejects, without throwing, a record whose timestamp cannot be read', () => {
    expect(SampleRecord.safeParse({ observed_at: 'yesterday', cpu: 1 }).success).toBe(false);
    expect(ConnectionRecord.safeParse({ agent_id: 'a', state: 'connected', hostname: 'h', os: 'o', arch: 'a', version: 'v', connected_at: 'soon' }).success).toBe(false);
  });

  it('keeps a real 0 and reads a missing metric as null, never 0', () => {
    expect(SampleRecord.parse({ observed_at: '2026-01-01T00:00:00Z', cpu: 0 })).toEqual({
      observed_at: '2026-01-01T00:00:00.000Z',
      cpu: 0,
      memory: null,
      disk: null,
    });
  });
});
