import { describe, expect, it } from 'vitest';
import { AgentInventory } from '../../lib/contract/schemas.js';
import type { ConnectionRecord, DurableRecord } from '../../lib/data-format/records.js';
import { connectionStateOf, summarizeAgent } from '../../lib/inventory/merge.js';

const NOW = new Date('2026-11-21T12:00:00.000Z');
const OPTIONS = { now: NOW, onlineGraceSeconds: 120 };
const secondsAgo = (s: number): string => new Date(NOW.getTime() - s * 1000).toISOString();

function durable(overrides: Partial<DurableRecord> = {}): DurableRecord {
  return {
    agent_id: 'a-1',
    hostname: 'web-1',
    os: 'linux',
    arch: 'x86_64',
    version: '2.4.1',
    client_id: 'c-17',
    client_name: 'Contoso',
    enrolled_at: '2026-10-01T00:00:00.000Z',
    update_ring: 'stable',
    last_heartbeat: secondsAgo(30),
    ...overrides,
  };
}

function connection(overrides: Partial<ConnectionRecord> = {}): ConnectionRecord {
  return {
    agent_id: 'a-1',
    state: 'connected',
    hostname: 'web-1-hello',
    os: 'linux-hello',
    arch: 'arm64',
    version: '2.5.0',
    connected_at: secondsAgo(3600),
    disconnected_at: undefined,
    last_heartbeat: secondsAgo(10),
    ...overrides,
  };
}

describe('Function: connectionStateOf', () => {
  it.each([
    ['never_connected when there is no connection record', undefined, secondsAgo(1), 'never_connected'],
    [
      'disconnected when the broker saw a disconnect, however fresh the heartbeat',
      connection({ state: 'disconnected' }),
      secondsAgo(1),
      'disconnected',
    ],
    ['connected when the heartbeat is within the grace', connection(), secondsAgo(119), 'connected'],
    ['connected when the heartbeat is exactly at the grace', connection(), secondsAgo(120), 'connected'],
    ['stale when the heartbeat is one millisecond past the grace', connection(), new Date(NOW.getTime() - 120_001).toISOString(), 'stale'],
    ['stale when a connected record has no heartbeat at all', connection({ last_heartbeat: undefined }), undefined, 'stale'],
    [
      'connected when the heartbeat is slightly in the future (clock skew)',
      connection(),
      new Date(NOW.getTime() + 5000).toISOString(),
      'connected',
    ],
  ] as const)('returns %s', (_name, record, heartbeat, expected) => {
    expect(connectionStateOf(record, heartbeat, OPTIONS)).toBe(expected);
  });
});

describe('Function: summarizeAgent', () => {
  it('returns the durable fields over the hello fields and the newer heartbeat when both records exist', () => {
    const summary = summarizeAgent(durable({ last_heartbeat: secondsAgo(300) }), connection({ last_heartbeat: secondsAgo(10) }), OPTIONS);

    expect(summary).toEqual({
      agent_id: 'a-1',
      hostname: 'web-1',
      os: 'linux',
      arch: 'x86_64',
      version: '2.4.1',
      is_online: true,
      connection_state: 'connected',
      client_id: 'c-17',
      connected_at: secondsAgo(3600),
      enrolled_at: '2026-10-01T00:00:00.000Z',
      last_heartbeat: secondsAgo(10),
      update_ring: 'stable',
    });
  });

  it('returns the durable heartbeat when it is newer than the connection one', () => {
    const summary = summarizeAgent(durable({ last_heartbeat: secondsAgo(5) }), connection({ last_heartbeat: secondsAgo(500) }), OPTIONS);

    expect(summary.last_heartbeat).toBe(secondsAgo(5));
    expect(summary.connection_state).toBe('connected');
  });

  it('lists a connection-only agent from its hello fields, with no durable-only fields', () => {
    const summary = summarizeAgent(undefined, connection(), OPTIONS);

    expect(summary).toEqual({
      agent_id: 'a-1',
      hostname: 'web-1-hello',
      os: 'linux-hello',
      arch: 'arm64',
      version: '2.5.0',
      is_online: true,
      connection_state: 'connected',
      connected_at: secondsAgo(3600),
      last_heartbeat: secondsAgo(10),
    });
  });

  it('omits every unknown optional field rather than sending null or an empty string', () => {
    const bare = { agent_id: 'a-2', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' };
    const summary = summarizeAgent(
      { ...bare, client_id: undefined, client_name: undefined, enrolled_at: undefined, update_ring: undefined, last_heartbeat: undefined },
      undefined,
      OPTIONS,
    );

    expect(summary).toEqual({ ...bare, is_online: false, connection_state: 'never_connected' });
    expect(Object.values(summary)).not.toContain(null);
    expect(Object.values(summary)).not.toContain('');
  });

  it('keeps disconnected_at and reports offline for a disconnected agent', () => {
    const summary = summarizeAgent(durable(), connection({ state: 'disconnected', disconnected_at: secondsAgo(60) }), OPTIONS);

    expect(summary.is_online).toBe(false);
    expect(summary.connection_state).toBe('disconnected');
    expect(summary.disconnected_at).toBe(secondsAgo(60));
  });
});

describe('Function: summarizeAgent, over the kinds of agent a page lists', () => {
  // The merge of a whole tenant, its order and an empty tenant are the store's listing's
  // (test/integration/inventory.test.ts), which reads each agent's records as its page gives them.
  it('gives summaries that the strict contract schema accepts, with is_online true exactly when connected', () => {
    const inventory = [
      summarizeAgent(durable({ agent_id: 'a' }), connection({ agent_id: 'a' }), OPTIONS),
      summarizeAgent(
        durable({ agent_id: 'b', last_heartbeat: secondsAgo(900) }),
        connection({ agent_id: 'b', last_heartbeat: secondsAgo(1000) }),
        OPTIONS,
      ),
      summarizeAgent(durable({ agent_id: 'c' }), undefined, OPTIONS),
      summarizeAgent(undefined, connection({ agent_id: 'd', state: 'disconnected' }), OPTIONS),
    ];

    expect(() => AgentInventory.parse(inventory)).not.toThrow();
    for (const agent of inventory) expect(agent.is_online).toBe(agent.connection_state === 'connected');
    expect(inventory.map((a) => [a.agent_id, a.connection_state, a.hostname])).toEqual([
      ['a', 'connected', 'web-1'],
      ['b', 'stale', 'web-1'],
      ['c', 'never_connected', 'web-1'],
      ['d', 'disconnected', 'web-1-hello'],
    ]);
  });
});
