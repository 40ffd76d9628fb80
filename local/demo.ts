import type { Fleet, FleetAgent } from './fleet.js';
import { seededRandom as random } from './generator.js';

/**
 * The demo fleet `npm start` seeds: two tenants of 50 agents each, every connection_state present,
 * a day of 1-minute samples for a few agents, dashboards in every status, a connection-only agent,
 * ids with characters that must be escaped, and the same agent_id in both tenants.
 * Every durable agent is in two endpoint groups, a region and a role (acme: `emea` for ac-001 to
 * ac-025, `americas` for the rest; `servers` for Linux, `workstations` for Windows and macOS), so
 * a scoped token (`npm run token -- --tenant acme --groups emea`) visibly sees less than an
 * unscoped one; the connection-only agent is in none (only unscoped and `*` tokens see it).
 * Times are relative to `now`, so the demo is alive whenever it starts.
 */

export const DEMO_TENANTS = ['acme', 'globex'] as const;

const iso = (ms: number): string => new Date(ms).toISOString();
const minuteFloor = (d: Date): number => Math.floor(d.getTime() / 60_000) * 60_000;
const round1 = (v: number): number => Math.round(v * 10) / 10;

export type Profile = 'ok' | 'warning' | 'critical' | 'gaps' | 'silent';

/** `count` 1-minute samples ending at `end`, shaped by a profile. */
export function sampleSeries(end: number, count: number, profile: Profile, rnd: () => number): NonNullable<FleetAgent['samples']> {
  const samples = [];
  for (let i = count - 1; i >= 0; i--) {
    const t = end - i * 60_000;
    const wave = Math.sin((t / 3_600_000) * Math.PI) * 5;
    let cpu: number | null = round1(Math.max(0, Math.min(100, 20 + wave + rnd() * 10)));
    let memory: number | null = round1(45 + rnd() * 8);
    let disk: number | null = round1(52 + i / 1000);
    if (profile === 'warning') disk = round1(86 + rnd() * 3);
    if (profile === 'critical') cpu = round1(96 + rnd() * 3);
    if (profile === 'gaps') {
      memory = null; // this agent never reports memory
      // Gaps in its CPU history, never in its newest sample: from its first minute its dashboard reads
      // as documented (CPU known, memory unknown).
      if (i % 7 === 3) cpu = null;
    }
    samples.push({ observed_at: iso(t), cpu, memory, disk });
  }
  return samples;
}

const OSES = [
  ['linux', 'x86_64'],
  ['windows', 'x86_64'],
  ['macos', 'arm64'],
  ['linux', 'arm64'],
] as const;

/** The two region groups of each demo tenant: the first half of its agents, then the second. */
const DEMO_REGIONS: Readonly<Record<string, readonly [string, string]>> = Object.freeze({
  acme: ['emea', 'americas'],
  globex: ['munich', 'hamburg'],
});

/** One tenant's 50 agents. */
function demoTenantAgents(tenant: string, now: Date, seed: number): FleetAgent[] {
  const rnd = random(seed);
  const end = minuteFloor(now);
  const agents: FleetAgent[] = [];
  const clients =
    tenant === 'acme'
      ? [
          ['c-17', 'Contoso'],
          ['c-18', 'Northwind'],
        ]
      : [
          ['g-1', 'Initech'],
          ['g-2', 'Umbrella'],
        ];
  const [firstRegion, secondRegion] = DEMO_REGIONS[tenant] ?? ['region-1', 'region-2'];
  for (let n = 1; n <= 50; n++) {
    const [os, arch] = OSES[n % OSES.length] as (typeof OSES)[number];
    const [clientId, clientName] = clients[n % 2] as [string, string];
    const id = `${tenant === 'acme' ? 'ac' : 'gx'}-${String(n).padStart(3, '0')}`;
    const enrolled = iso(end - (30 + n) * 86_400_000);
    const base = {
      agent_id: id,
      hostname: `${tenant}-${os === 'windows' ? 'ws' : 'srv'}-${n}`,
      os,
      arch,
      version: n % 5 === 0 ? '2.3.9' : '2.4.1',
      client_id: clientId,
      client_name: clientName,
      enrolled_at: enrolled,
      update_ring: n % 10 === 0 ? 'beta' : 'stable',
      groups: [n <= 25 ? firstRegion : secondRegion, os === 'linux' ? 'servers' : 'workstations'],
    };
    // Cycle through the states: most connected, some stale, disconnected, never connected.
    const kind = n % 10;
    if (kind === 7) {
      // disconnected two hours ago
      agents.push({
        ...base,
        last_heartbeat: iso(end - 2 * 3_600_000),
        connection: { state: 'disconnected', connected_at: iso(end - 26 * 3_600_000), disconnected_at: iso(end - 2 * 3_600_000) },
      });
    } else if (kind === 8) {
      // connected, but the heartbeat stopped ten minutes ago
      agents.push({
        ...base,
        last_heartbeat: iso(end - 10 * 60_000),
        connection: { state: 'connected', connected_at: iso(end - 5 * 3_600_000) },
      });
    } else if (kind === 9) {
      agents.push({ ...base }); // enrolled, never connected
    } else {
      agents.push({
        ...base,
        last_heartbeat: iso(end - Math.floor(rnd() * 30_000)),
        connection: { state: 'connected', connected_at: iso(end - (1 + n) * 3_600_000) },
      });
    }
  }
  // Dashboards in every status (a day of 1-minute samples for these).
  const profiles: Profile[] = ['ok', 'warning', 'critical', 'gaps'];
  for (const [i, profile] of profiles.entries()) {
    const agent = agents[i];
    if (agent) agent.samples = sampleSeries(end, 1440, profile, rnd);
  }
  // An agent whose last samples are two hours old: metrics known, but nothing in the default window.
  const late = agents[4];
  if (late) late.samples = sampleSeries(end - 2 * 3_600_000, 60, 'ok', rnd);
  return agents;
}

/** The demo fleet at `now`. */
export function demoFleet(now: Date): Fleet {
  const acme = demoTenantAgents('acme', now, 17);
  const globex = demoTenantAgents('globex', now, 42);
  const end = minuteFloor(now);
  // A connection-only agent (the broker saw it before enrollment finished).
  acme.push({
    agent_id: 'ac-new laptop',
    hostname: 'acme-laptop-new',
    os: 'windows',
    arch: 'arm64',
    version: '2.4.1',
    durable: false,
    last_heartbeat: iso(end - 15_000),
    connection: { state: 'connected', connected_at: iso(end - 600_000) },
  });
  // Ids with separators and non-ASCII, which the key builder must keep apart.
  acme.push({
    agent_id: 'ops/db #1',
    hostname: 'acme-db-1',
    os: 'linux',
    arch: 'x86_64',
    version: '2.4.1',
    client_name: 'Contoso',
    groups: ['emea', 'servers', 'databases'],
  });
  acme.push({
    agent_id: 'ops/db %23 1',
    hostname: 'acme-db-2',
    os: 'linux',
    arch: 'x86_64',
    version: '2.4.1',
    groups: ['americas', 'servers', 'databases'],
  });
  globex.push({
    agent_id: 'kiosk-münchen',
    hostname: 'gx-kiosk',
    os: 'linux',
    arch: 'arm64',
    version: '2.4.1',
    groups: ['munich', 'kiosks'],
  });
  // The same agent_id in both tenants: two different endpoints.
  globex.push({
    agent_id: 'ac-001',
    hostname: 'globex-shadow',
    os: 'linux',
    arch: 'x86_64',
    version: '1.0.0',
    groups: ['hamburg', 'servers'],
  });
  return {
    tenants: [
      { tenant_id: 'acme', policy: { ticket: 'optional', thresholds: { disk: { warning: 80, critical: 90 } } }, agents: acme },
      { tenant_id: 'globex', policy: { ticket: 'required', thresholds: {} }, agents: globex },
    ],
  };
}
