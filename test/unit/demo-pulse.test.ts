import { describe, expect, it } from 'vitest';
import { demoFleet } from '../../local/demo.js';
import { demoPulseFleet, fleetPulse } from '../../local/demo-pulse.js';
import { shiftFleet } from '../../local/fleet-time.js';
import { readFleetFile } from '../../local/seed-file.js';

describe('Function: demoPulseFleet', () => {
  const start = new Date('2026-11-23T10:00:30Z');
  const later = new Date('2026-11-23T10:07:00Z');
  const agentsOf = (tenant: string) => demoPulseFleet(start, later).tenants.find((t) => t.tenant_id === tenant)!.agents!;
  const seeded = (id: string) =>
    demoFleet(start)
      .tenants.flatMap((t) => t.agents ?? [])
      .find((a) => a.agent_id === id)!;

  it('beats for connected endpoints and reporting ones only, at the given time', () => {
    const acme = new Map(agentsOf('acme').map((a) => [a.agent_id, a]));

    expect(acme.get('ac-001')).toMatchObject({ last_heartbeat: later.toISOString(), samples: [{ observed_at: later.toISOString() }] });
    expect(acme.get('ac-005')).toMatchObject({ last_heartbeat: later.toISOString(), samples: [] });
    expect(acme.get('ac-new laptop')).toMatchObject({ durable: false, last_heartbeat: later.toISOString() });
    for (const quiet of ['ac-007', 'ac-008', 'ac-009', 'ops/db #1']) expect(acme.has(quiet)).toBe(false);
  });

  it.each([0, 1, 30, 59])('finds the live endpoints whatever the second of the minute the stack starts at (:%s)', (second) => {
    const at = new Date(`2026-11-23T10:00:${String(second).padStart(2, '0')}.900Z`);
    const live = demoPulseFleet(at, later)
      .tenants.flatMap((t) => t.agents ?? [])
      .map((a) => a.agent_id);

    expect(live).toEqual(expect.arrayContaining(['ac-001', 'ac-002', 'ac-003', 'ac-004', 'ac-005', 'ac-new laptop', 'gx-001']));
    expect(live).not.toEqual(expect.arrayContaining(['ac-008']));
  });

  it("repeats each metric's last value, and keeps a metric that was never reported unreported", () => {
    const gaps = agentsOf('acme').find((a) => a.agent_id === 'ac-004')!;
    const seededSamples = seeded('ac-004').samples!;
    const lastCpu = seededSamples.filter((s) => s.cpu !== null).at(-1)!.cpu;

    expect(gaps.samples).toEqual([{ observed_at: later.toISOString(), cpu: lastCpu, memory: null, disk: seededSamples.at(-1)!.disk }]);
  });
});

describe('Function: fleetPulse', () => {
  it('beats for the agents of a fleet file that were live at its start, and leaves the stale, disconnected and quiet ones alone', async () => {
    const start = new Date('2026-12-01T12:00:00Z');
    const fleet = shiftFleet(await readFleetFile(new URL('../../examples/fleet.json', import.meta.url).pathname), start);
    const later = new Date('2026-12-01T12:05:00Z');

    const live = fleetPulse(fleet, start, later).tenants[0]!.agents!;

    expect(live.map((a) => a.agent_id).sort()).toEqual(['build-02', 'db-01', 'edge-09', 'web-01']);
    expect(live.every((a) => a.connection?.last_heartbeat === later.toISOString())).toBe(true);
    expect(live.find((a) => a.agent_id === 'edge-09')?.samples).toEqual([
      { observed_at: later.toISOString(), cpu: expect.any(Number), memory: null, disk: expect.any(Number) },
    ]);
  });
});
