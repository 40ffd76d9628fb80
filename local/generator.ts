import type { FleetAgent } from './fleet.js';

/**
 * Realistic generated tenants, for `npm run seed -- --generate` and for `npm run bench` (one
 * generator, so the data the bench measures is the data anyone can seed). Realistic means what
 * changes the costs that matter (Query pages, JSON size, how well gzip compresses): random
 * UUID-like agent ids, hostnames in the styles real fleets have (Windows DESKTOP-/LAPTOP- names,
 * cloud instance names, site-coded servers, Macs), a spread of OS, architecture, agent version,
 * client and update ring, millisecond timestamps spread over realistic ranges, every connection
 * state (connected, stale, disconnected, never connected, known only to the broker), endpoint
 * groups (a region, a site in it and a role, some agents also `critical` or `pci`, a few in none
 * yet), and samples with per-endpoint levels, daily waves, noise, spikes and gaps.
 *
 * Deterministic: the same tenant name, size and `now` minute give the same fleet, so seeding twice
 * within a minute writes the same items.
 */

/** A small, fast, seedable generator (mulberry32); `Math.random` would make runs unrepeatable. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from a string (FNV-1a). */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

type Random = () => number;

const HEX = '0123456789abcdef';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** One of `items` (never empty: every list here is a constant). */
function pick<T>(rnd: Random, items: readonly [T, ...T[]] | readonly T[]): T {
  const item = items[Math.floor(rnd() * items.length)];
  if (item === undefined) throw new RangeError('pick needs a list with at least one item');
  return item;
}
const int = (rnd: Random, min: number, max: number): number => min + Math.floor(rnd() * (max - min + 1));
const chars = (rnd: Random, alphabet: string, n: number): string => {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[Math.floor(rnd() * alphabet.length)];
  return out;
};
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Picks by weight: `[[value, weight], ...]`. */
function weighted<T>(rnd: Random, table: readonly (readonly [T, number])[]): T {
  const total = table.reduce((s, [, w]) => s + w, 0);
  let r = rnd() * total;
  for (const [value, w] of table) {
    r -= w;
    if (r < 0) return value;
  }
  // Only rounding can leave r at 0 after the last row: that row.
  const last = table.at(-1);
  if (!last) throw new RangeError('weighted needs a table with at least one row');
  return last[0];
}

/** A random (version 4 layout) UUID, lower-case, from the seeded generator. */
export function uuidFrom(rnd: Random): string {
  const variant = pick(rnd, ['8', '9', 'a', 'b']);
  return `${chars(rnd, HEX, 8)}-${chars(rnd, HEX, 4)}-4${chars(rnd, HEX, 3)}-${variant}${chars(rnd, HEX, 3)}-${chars(rnd, HEX, 12)}`;
}

const SITES = ['fra1', 'ams2', 'lon3', 'par1', 'nyc2', 'sfo1', 'sin4', 'syd1', 'muc1', 'zrh2', 'dub1', 'tor3', 'sao1', 'mad2', 'waw1'];
const ROLES = [
  'web',
  'api',
  'db',
  'cache',
  'mq',
  'batch',
  'ci',
  'build',
  'file',
  'print',
  'dc',
  'vpn',
  'proxy',
  'mail',
  'app',
  'etl',
  'k8s-node',
];
const ENVS = ['prod', 'prod', 'prod', 'stg', 'dev', 'qa'];
const DOMAINS = ['corp.example.com', 'internal.example.net', 'ad.example.org', 'example.local', 'ops.example.io'];
const REGIONS = ['eu-west-1', 'eu-central-1', 'us-east-1', 'us-west-2', 'ap-southeast-2', 'eu-north-1'];
const FIRST_NAMES = [
  'anna',
  'ben',
  'chloe',
  'david',
  'emma',
  'felix',
  'greta',
  'hugo',
  'ines',
  'jonas',
  'karin',
  'liam',
  'mia',
  'noah',
  'olga',
  'paul',
  'rosa',
  'sven',
  'tara',
  'umar',
  'vera',
  'wei',
  'yusuf',
  'zoe',
];
const COMPANY_WORDS = [
  'Contoso',
  'Northwind',
  'Fabrikam',
  'Tailspin',
  'Woodgrove',
  'Litware',
  'Adatum',
  'Proseware',
  'Lucerne',
  'Wingtip',
  'Alpine',
  'Blue Yonder',
  'Coho',
  'Fourth Coffee',
  'Margie',
  'Trey',
  'Humongous',
  'Graphic Design',
  'Southridge',
  'Wide World',
];
const COMPANY_SUFFIXES = ['GmbH', 'Ltd', 'Inc.', 'AG', 'B.V.', 'S.A.', '& Partners', 'Group', 'Holdings', 'LLC'];

type Os = 'windows' | 'linux' | 'macos';

function hostnameFor(rnd: Random, os: Os, n: number): string {
  if (os === 'windows') {
    return weighted(rnd, [
      [() => `DESKTOP-${chars(rnd, ALNUM, 7)}`, 4],
      [() => `LAPTOP-${chars(rnd, ALNUM, 8)}`, 3],
      [() => `${pick(rnd, SITES).toUpperCase()}-WS-${pad(int(rnd, 1, 9999), 4)}`, 2],
      [() => `${pick(rnd, SITES).toUpperCase()}-SRV-${pick(rnd, ROLES).toUpperCase()}${pad(int(rnd, 1, 40), 2)}`, 1],
    ] as const)();
  }
  if (os === 'macos') {
    return weighted(rnd, [
      [() => `${pick(rnd, FIRST_NAMES)}s-MacBook-Pro`, 3],
      [() => `${pick(rnd, FIRST_NAMES)}-mba-${chars(rnd, HEX, 4)}`, 2],
      [() => `mac-${pad(n % 100_000, 5)}.${pick(rnd, DOMAINS)}`, 2],
    ] as const)();
  }
  return weighted(rnd, [
    [() => `ip-10-${int(rnd, 0, 255)}-${int(rnd, 0, 255)}-${int(rnd, 1, 254)}.${pick(rnd, REGIONS)}.compute.internal`, 3],
    [() => `${pick(rnd, ROLES)}-${pick(rnd, ENVS)}-${pad(int(rnd, 1, 60), 2)}.${pick(rnd, DOMAINS)}`, 3],
    [() => `${pick(rnd, ROLES)}${pad(int(rnd, 1, 99), 2)}.${pick(rnd, SITES)}.${pick(rnd, DOMAINS)}`, 2],
    [() => `k8s-node-${chars(rnd, HEX, 6)}-${chars(rnd, 'bcdfghjklmnpqrstvwxz2456789', 5)}`, 1],
  ] as const)();
}

/** The sites of each region (every site of SITES once): an agent's groups are its region, one of its sites and its role. */
const REGION_SITES = {
  emea: ['fra1', 'ams2', 'lon3', 'par1', 'muc1', 'zrh2', 'dub1', 'mad2', 'waw1'],
  amer: ['nyc2', 'sfo1', 'tor3', 'sao1'],
  apac: ['sin4', 'syd1'],
} as const;

/**
 * The endpoint groups of one agent, from its own generator (so adding groups changed no other
 * field of a generated fleet): a region (EMEA about 45%, Americas 40%, APAC 15%), a site in it,
 * its role (`servers` for Linux, `workstations` otherwise), sometimes `critical` (8%) or `pci`
 * (5%); 2% are in no group yet (visible to unscoped and `*` tokens only).
 */
function groupsFor(rnd: Random, os: Os): string[] | undefined {
  if (rnd() < 0.02) return undefined;
  const region = weighted(rnd, [
    ['emea', 45],
    ['amer', 40],
    ['apac', 15],
  ] as const);
  const groups: string[] = [region, pick(rnd, REGION_SITES[region]), os === 'linux' ? 'servers' : 'workstations'];
  if (rnd() < 0.08) groups.push('critical');
  if (rnd() < 0.05) groups.push('pci');
  return groups;
}

const VERSIONS = [
  ['2.4.1', 38],
  ['2.4.0', 18],
  ['2.3.9', 14],
  ['2.5.0', 10],
  ['2.3.7', 8],
  ['2.2.4', 5],
  ['2.5.1-rc.2', 2],
  ['2.1.12', 3],
  ['1.9.30', 2],
] as const;

/** The states a generated agent is given; `connection_only` is a broker record without a durable one. */
type GeneratedState = 'connected' | 'stale' | 'disconnected' | 'never_connected' | 'connection_only';
const STATES = [
  ['connected', 68],
  ['stale', 6],
  ['disconnected', 14],
  ['never_connected', 9],
  ['connection_only', 3],
] as const;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const iso = (ms: number): string => new Date(ms).toISOString();

interface Client {
  id: string;
  name: string;
}

function clientsFor(rnd: Random, agents: number): Client[] {
  const count = Math.max(3, Math.min(400, Math.round(agents / 60)));
  return Array.from({ length: count }, () => ({
    id: `cl-${chars(rnd, HEX, 8)}`,
    name: `${pick(rnd, COMPANY_WORDS)} ${pick(rnd, COMPANY_SUFFIXES)}`,
  }));
}

export interface GenerateOptions {
  /** The clock the fleet is alive at; times are relative to its minute. */
  now: Date;
  /** 1-minute samples per agent (default 0). */
  samples?: number;
  /** Overrides the seed derived from the tenant and the counts. */
  seed?: number;
}

/**
 * `count` realistic agents of `tenant`, generated lazily (a 100,000-agent tenant is never held in
 * memory by a caller that streams them). Every state occurs in every tenant of 20 or more
 * agents: the first agents cycle through the states before the weighted draw takes over.
 */
export function* realisticAgents(tenant: string, count: number, options: GenerateOptions): Generator<FleetAgent> {
  const samples = options.samples ?? 0;
  // The agents depend on the tenant and its size only; each agent's samples on its own id, so the
  // same tenant with or without samples has the same agents.
  const rnd = seededRandom(options.seed ?? seedOf(`${tenant}/${count}`));
  const end = Math.floor(options.now.getTime() / MINUTE) * MINUTE;
  const clients = clientsFor(rnd, count);
  for (let n = 0; n < count; n++) {
    const state: GeneratedState = STATES[n]?.[0] ?? weighted(rnd, STATES);
    const os = weighted<Os>(rnd, [
      ['windows', 50],
      ['linux', 35],
      ['macos', 15],
    ]);
    const arch =
      os === 'macos'
        ? weighted(rnd, [
            ['arm64', 80],
            ['x86_64', 20],
          ] as const)
        : os === 'windows'
          ? weighted(rnd, [
              ['x86_64', 90],
              ['arm64', 10],
            ] as const)
          : weighted(rnd, [
              ['x86_64', 75],
              ['arm64', 25],
            ] as const);
    const client = rnd() < 0.9 ? pick(rnd, clients) : undefined;
    const ring = weighted(rnd, [
      ['stable', 75],
      ['beta', 12],
      ['canary', 5],
      [undefined, 8],
    ] as const);
    const enrolledAt = end - int(rnd, 2 * DAY, 730 * DAY) - int(rnd, 0, 999);
    const agent: FleetAgent = { agent_id: uuidFrom(rnd), hostname: hostnameFor(rnd, os, n), os, arch, version: weighted(rnd, VERSIONS) };
    if (client) {
      agent.client_id = client.id;
      agent.client_name = client.name;
    }
    agent.enrolled_at = iso(enrolledAt);
    if (ring) agent.update_ring = ring;
    // Heartbeats and connection times with millisecond precision, as the pipelines stamp them.
    const since = (min: number, max: number): number => end - int(rnd, min, max);
    if (state === 'connected' || state === 'connection_only') {
      // Within 40 s of the minute the fleet is generated at: still connected when listed within the next minute.
      agent.last_heartbeat = iso(since(0, 40_000));
      agent.connection = { state: 'connected', connected_at: iso(since(MINUTE, Math.min(30 * DAY, end - enrolledAt))) };
      if (rnd() < 0.5) agent.connection.last_heartbeat = iso(since(0, 40_000));
      if (state === 'connection_only') agent.durable = false;
    } else if (state === 'stale') {
      agent.last_heartbeat = iso(since(3 * MINUTE, 2 * DAY));
      agent.connection = { state: 'connected', connected_at: iso(since(2 * DAY + HOUR, 40 * DAY)) };
    } else if (state === 'disconnected') {
      const at = since(5 * MINUTE, 60 * DAY);
      agent.last_heartbeat = iso(at - int(rnd, 0, 60_000));
      agent.connection = { state: 'disconnected', connected_at: iso(at - int(rnd, HOUR, 20 * DAY)), disconnected_at: iso(at) };
    } else if (rnd() < 0.5) {
      agent.last_heartbeat = iso(since(HOUR, 300 * DAY)); // enrolled and heard of, never through the broker
    }
    // Groups live on the durable record: an agent known only to the broker has none.
    if (agent.durable !== false) {
      const groups = groupsFor(seededRandom(seedOf(`${agent.agent_id}#groups`)), os);
      if (groups) agent.groups = groups;
    }
    if (samples > 0) {
      const own = seededRandom(seedOf(agent.agent_id));
      agent.samples = realisticSamples(own, end, samples, { silentMemory: own() < 0.03 });
    }
    yield agent;
  }
}

/**
 * `count` 1-minute samples ending at `end` (ms), oldest first: per-endpoint base levels, a daily
 * wave, noise and spikes on cpu, slowly moving memory, slowly filling disk, a few gaps (a metric
 * not reported), and each sample stamped at its own millisecond within its minute.
 */
export function realisticSamples(
  rnd: Random,
  end: number,
  count: number,
  options: { silentMemory?: boolean } = {},
): NonNullable<FleetAgent['samples']> {
  const cpuBase = 5 + rnd() * 45;
  let memory = 30 + rnd() * 50;
  let disk = 20 + rnd() * 70;
  const offset = int(rnd, 0, 59_000);
  const round2 = (v: number): number => Math.round(Math.min(100, Math.max(0, v)) * 100) / 100;
  const out: NonNullable<FleetAgent['samples']> = [];
  for (let i = count - 1; i >= 0; i--) {
    const t = end - i * MINUTE - MINUTE + offset + int(rnd, 0, 900);
    const daily = Math.sin(((t % DAY) / DAY) * 2 * Math.PI) * 8;
    const spike = rnd() < 0.01 ? 30 + rnd() * 40 : 0;
    memory += (rnd() - 0.5) * 0.8;
    memory = Math.min(97, Math.max(10, memory));
    disk = Math.min(99.5, disk + rnd() * 0.002);
    const gap = rnd() < 0.01;
    out.push({
      observed_at: iso(t),
      cpu: gap ? null : round2(cpuBase + daily + (rnd() - 0.5) * 10 + spike),
      memory: options.silentMemory || gap ? null : round2(memory),
      disk: round2(disk),
    });
  }
  return out;
}
