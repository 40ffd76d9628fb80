import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { Fleet } from '../../local/fleet.js';
import { newestReport, shiftFleet, staleFleetNote } from '../../local/fleet-time.js';
import { FleetFileError, readFleetFile } from '../../local/seed-file.js';

describe('Fleet files as documented', () => {
  it('reads the example fleet file of the repository as it is', async () => {
    const fleet = await readFleetFile(join(ROOT, 'examples', 'fleet.json'));

    expect(fleet.tenants.map((t) => t.tenant_id)).toEqual(['example-msp']);
    expect(fleet.tenants[0]!.agents.map((a) => a.agent_id)).toEqual([
      'web-01',
      'db-01',
      'build-02',
      'laptop-07',
      'kiosk-03',
      'new-04',
      'edge-09',
    ]);
    expect(newestReport(fleet)?.toISOString()).toBe('2026-11-20T09:00:00.000Z');
  });

  it('accepts the fleet example of docs/design.md §7 as written', () => {
    const design = readFileSync(join(ROOT, 'docs', 'design.md'), 'utf8');
    const example = /Fleet file \(timestamps RFC 3339[\s\S]*?```json\n([\s\S]*?)```/.exec(design)?.[1];

    const parsed = Fleet.safeParse(JSON.parse(example ?? 'null'));

    expect(parsed.error?.issues ?? []).toEqual([]);
  });
});

describe('Function: shiftFleet', () => {
  const fleet = Fleet.parse({
    tenants: [
      {
        tenant_id: 't',
        agents: [
          {
            agent_id: 'a',
            hostname: 'h',
            os: 'linux',
            arch: 'x86_64',
            version: '1',
            enrolled_at: '2026-01-01T00:00:00Z',
            last_heartbeat: '2026-11-20T08:59:00Z',
            connection: { state: 'connected', connected_at: '2026-11-20T08:00:00Z', disconnected_at: null },
            samples: [{ observed_at: '2026-11-20T09:00:00Z', cpu: 1 }],
          },
          { agent_id: 'b', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' },
        ],
      },
    ],
  });

  it('moves every time by one offset, so that the newest report is at the given time', () => {
    const shifted = shiftFleet(fleet, new Date('2026-12-01T12:00:00Z'));
    const [a, b] = shifted.tenants[0]!.agents;

    expect(newestReport(shifted)?.toISOString()).toBe('2026-12-01T12:00:00.000Z');
    expect(a).toMatchObject({
      enrolled_at: '2026-01-12T03:00:00.000Z',
      last_heartbeat: '2026-12-01T11:59:00.000Z',
      connection: { connected_at: '2026-12-01T11:00:00.000Z', disconnected_at: null },
      samples: [{ observed_at: '2026-12-01T12:00:00.000Z', cpu: 1 }],
    });
    expect(b).toEqual(fleet.tenants[0]!.agents[1]);
  });

  it('says once why a fleet written days ago looks stale, and names the way to keep it live', () => {
    const note = staleFleetNote(fleet, new Date('2026-11-24T09:00:00Z'), 120);

    expect(note).toBe(
      "note: the fleet file's newest report is from 2026-11-20T09:00:00.000Z; its times are kept as written, so its connected agents list as stale " +
        'and its observations as expired or outside the window. SEED_LIVE=true moves its times to now and keeps it reporting, as the demo does.',
    );
    expect(staleFleetNote(fleet, new Date('2026-11-20T09:01:00Z'), 120)).toBeUndefined();
  });
});

describe('Fleet files: endpoint groups', () => {
  const fleetWith = (groups: unknown, extra: object = {}) => ({
    tenants: [
      {
        tenant_id: 't',
        agents: [
          { agent_id: 'a', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' },
          { agent_id: 'b', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1', groups, ...extra },
        ],
      },
    ],
  });
  async function refusal(fleet: object): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-groups-'));
    const path = join(dir, 'fleet.json');
    writeFileSync(path, JSON.stringify(fleet));
    try {
      await readFleetFile(path);
    } catch (error) {
      expect(error).toBeInstanceOf(FleetFileError);
      return (error as Error).message.replace(path, 'FILE');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    throw new Error('the fleet file was accepted');
  }

  it('accepts groups on an agent and keeps them as written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-groups-'));
    const path = join(dir, 'fleet.json');
    writeFileSync(path, JSON.stringify(fleetWith(['emea', 'münchen', 'x'.repeat(128)])));

    const fleet = await readFleetFile(path);

    rmSync(dir, { recursive: true, force: true });
    expect(fleet.tenants[0]!.agents[1]!.groups).toEqual(['emea', 'münchen', 'x'.repeat(128)]);
  });

  it.each<[string, unknown, object, string]>([
    ['a string instead of a list', 'emea', {}, 'tenants[0].agents[1].groups: expected array, received string'],
    ['a name that is not a string', ['emea', 7], {}, 'tenants[0].agents[1].groups[1]: expected string, received number'],
    ['an empty name', [''], {}, 'tenants[0].agents[1].groups[0]: a group name is 1 to 128 characters'],
    ['a name over 128 characters', ['x'.repeat(129)], {}, 'tenants[0].agents[1].groups[0]: a group name is 1 to 128 characters'],
    [
      '"*", which a token uses for every group',
      ['*'],
      {},
      'tenants[0].agents[1].groups[0]: "*" is not a group name (in a token it means every group)',
    ],
    ['a name given twice', ['emea', 'emea'], {}, 'tenants[0].agents[1].groups: a group appears twice in one agent'],
    [
      'groups on an agent known only to the broker',
      ['emea'],
      { durable: false, connection: { state: 'connected' } },
      'tenants[0].agents[1].groups: groups are kept on the durable record: an agent with durable: false has none',
    ],
  ])('refuses %s, naming the place and the rule', async (_what, groups, extra, problem) => {
    expect(await refusal(fleetWith(groups, extra))).toBe(`the fleet file FILE is not a valid fleet: ${problem}`);
  });
});
