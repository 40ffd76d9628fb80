import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../infra/local/stack.js';
import { brokerTokenFor } from '../../infra/local/token-exchange.js';
import { config } from '../../lib/config.js';
import { AgentInventory, EndpointDashboard } from '../../lib/contract/schemas.js';
import { get, startShrunkTimeStack } from '../helpers/stack.js';

// The fleets `npm start` keeps live, each on a stack of its own with time shrunk. They share a file
// so that their waits (a grace period each) run one after the other in one worker: apart, two
// workers could sit in both waits at once with nothing to do.

/**
 * The demo `npm start` seeds stays as the README describes it while the stack runs. The test
 * shrinks time: a grace and a TTL of 3 s and a pulse every half second stand for 120 s, 600 s and a
 * minute, so "after the grace has passed" takes seconds (six beats within a grace leave room for a
 * slow machine's writes).
 */

describe('E2E: the demo while npm start runs', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await startShrunkTimeStack('demo');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('keeps every documented status after the grace and the TTL have passed', async () => {
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const cfg = config();
    const inventoryToken = await stack.issuer.sign({ issuer: cfg.jwtIssuer, audience: cfg.jwtAudience, tenant: 'acme', tenantClaim: cfg.tenantClaim });
    const brokerToken = await brokerTokenFor(
      stack.issuer,
      { issuer: cfg.jwtIssuer, tenantClaim: cfg.tenantClaim, clientId: cfg.brokerClientId, audience: cfg.observationsAudience },
      { subject: 'demo-check', tenant: 'acme' },
    );
    const dashboard = async (id: string) => {
      const res = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=${id}`, { Authorization: `Bearer ${brokerToken}`, 'X-Service-Reason': 'demo check' });
      return EndpointDashboard.parse(JSON.parse(res.body));
    };

    const agents = AgentInventory.parse(JSON.parse((await get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${inventoryToken}` })).body));
    const state = (id: string) => agents.find((a) => a.agent_id === id)?.connection_state;

    expect([state('ac-001'), state('ac-008'), state('ac-007'), state('ac-009'), state('ac-new laptop')]).toEqual(['connected', 'stale', 'disconnected', 'never_connected', 'connected']);
    expect((await dashboard('ac-001')).status).toBe('ok');
    expect((await dashboard('ac-002')).status).toBe('warning');
    expect((await dashboard('ac-003')).status).toBe('critical');
    const gaps = await dashboard('ac-004');
    expect(gaps.metrics?.map((m) => [m.key, m.status])).toEqual([['cpu', 'ok'], ['memory', 'unknown'], ['disk', 'ok']]);
    expect((await dashboard('ac-005')).history).toEqual([]);
    expect((await dashboard('ac-009')).metrics).toBeNull();
    expect((await dashboard('ac-001')).findings).toEqual([]);
  });
});

/**
 * The example fleet file of the repository with SEED_LIVE=true: written days ago, it lists and
 * reads as it did when it was written, and stays so while the stack runs. Time is shrunk as in the
 * demo's test: a grace and a TTL of 3 s and a pulse every half second stand for 120 s, 600 s and a minute.
 */
describe('E2E: SEED=examples/fleet.json SEED_LIVE=true npm start', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await startShrunkTimeStack(join(import.meta.dirname, '..', '..', 'examples', 'fleet.json'), { seedLive: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('lists and reads the fleet as it was when written, and keeps it so after the grace and the TTL have passed', async () => {
    const cfg = config();
    const tenant = 'example-msp';
    const inventoryToken = await stack.issuer.sign({ issuer: cfg.jwtIssuer, audience: cfg.jwtAudience, tenant, tenantClaim: cfg.tenantClaim });
    const brokerToken = await brokerTokenFor(
      stack.issuer,
      { issuer: cfg.jwtIssuer, tenantClaim: cfg.tenantClaim, clientId: cfg.brokerClientId, audience: cfg.observationsAudience },
      { subject: 'fleet-check', tenant },
    );
    const states = async (): Promise<Record<string, string>> => {
      const listed = AgentInventory.parse(JSON.parse((await get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${inventoryToken}` })).body));
      return Object.fromEntries(listed.map((a) => [a.agent_id, a.connection_state]));
    };
    const status = async (id: string): Promise<string> => {
      const res = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=${id}`, { Authorization: `Bearer ${brokerToken}`, 'X-Service-Reason': 'fleet check' });
      return EndpointDashboard.parse(JSON.parse(res.body)).status;
    };
    const expected = { 'build-02': 'connected', 'db-01': 'connected', 'edge-09': 'connected', 'kiosk-03': 'disconnected', 'laptop-07': 'stale', 'new-04': 'never_connected', 'web-01': 'connected' };

    const atStart = await states();
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const later = await states();

    expect(atStart).toEqual(expected);
    expect(later).toEqual(expected);
    expect([await status('web-01'), await status('db-01'), await status('build-02')]).toEqual(['ok', 'warning', 'critical']);
  });
});
