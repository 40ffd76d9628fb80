import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentInventory, EndpointDashboard } from '../../lib/contract/schemas.js';
import { get, startShrunkTimeStack, type TestStack } from '../helpers/stack.js';

/**
 * The fleets `npm start` keeps live stay as they were seeded while the stack runs, each on a stack
 * of its own with time shrunk: a grace and a TTL of 3 s and a pulse every half second stand for
 * 120 s, 600 s and a minute, so "after the grace has passed" takes seconds (six beats within a
 * grace leave room for a slow machine's writes). The two share a file so that their waits run one
 * after the other in one worker: apart, two workers could sit in both waits at once with nothing to do.
 */

/** The inventory of `tenant` on `stack`, and a reader of one endpoint's dashboard through the private hop, as the broker reads it. */
async function readers(stack: TestStack, tenant: string, reason: string) {
  const [inventoryToken, brokerToken] = await Promise.all([stack.token({ tenant }), stack.brokerToken({ tenant })]);
  return {
    inventory: async () =>
      AgentInventory.parse(JSON.parse((await get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${inventoryToken}` })).body)),
    dashboard: async (id: string) => {
      const res = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=${id}`, {
        Authorization: `Bearer ${brokerToken}`,
        'X-Service-Reason': reason,
      });
      return EndpointDashboard.parse(JSON.parse(res.body));
    },
  };
}

describe('E2E: the demo while npm start runs', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startShrunkTimeStack('demo');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('shows every documented status from its start and after the grace and the TTL have passed', async () => {
    const atStart = await readers(stack, 'acme', 'demo check');
    const gapsAtStart = await atStart.dashboard('ac-004');
    expect(gapsAtStart.metrics?.map((m) => [m.key, m.status])).toEqual([
      ['cpu', 'ok'],
      ['memory', 'unknown'],
      ['disk', 'ok'],
    ]);
    expect(gapsAtStart.history?.some((s) => s.cpu === null)).toBe(true);

    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const { inventory, dashboard } = await readers(stack, 'acme', 'demo check');

    const agents = await inventory();
    const state = (id: string) => agents.find((a) => a.agent_id === id)?.connection_state;

    expect([state('ac-001'), state('ac-008'), state('ac-007'), state('ac-009'), state('ac-new laptop')]).toEqual([
      'connected',
      'stale',
      'disconnected',
      'never_connected',
      'connected',
    ]);
    expect((await dashboard('ac-001')).status).toBe('ok');
    expect((await dashboard('ac-002')).status).toBe('warning');
    expect((await dashboard('ac-003')).status).toBe('critical');
    const gaps = await dashboard('ac-004');
    expect(gaps.metrics?.map((m) => [m.key, m.status])).toEqual([
      ['cpu', 'ok'],
      ['memory', 'unknown'],
      ['disk', 'ok'],
    ]);
    expect((await dashboard('ac-005')).history).toEqual([]);
    expect((await dashboard('ac-009')).metrics).toBeNull();
    expect((await dashboard('ac-001')).findings).toEqual([]);
  });
});

/** The example fleet file of the repository with SEED_LIVE=true: written days ago, it lists and reads as it did when it was written. */
describe('E2E: SEED=examples/fleet.json SEED_LIVE=true npm start', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startShrunkTimeStack(join(import.meta.dirname, '..', '..', 'examples', 'fleet.json'), { seedLive: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('lists and reads the fleet as it was when written, and keeps it so after the grace and the TTL have passed', async () => {
    const { inventory, dashboard } = await readers(stack, 'example-msp', 'fleet check');
    const states = async (): Promise<Record<string, string>> =>
      Object.fromEntries((await inventory()).map((a) => [a.agent_id, a.connection_state]));
    const expected = {
      'build-02': 'connected',
      'db-01': 'connected',
      'edge-09': 'connected',
      'kiosk-03': 'disconnected',
      'laptop-07': 'stale',
      'new-04': 'never_connected',
      'web-01': 'connected',
    };

    const atStart = await states();
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const later = await states();

    expect(atStart).toEqual(expected);
    expect(later).toEqual(expected);
    expect([(await dashboard('web-01')).status, (await dashboard('db-01')).status, (await dashboard('build-02')).status]).toEqual([
      'ok',
      'warning',
      'critical',
    ]);
  });
});
