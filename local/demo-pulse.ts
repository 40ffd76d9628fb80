import { demoFleet } from './demo.js';
import type { Fleet, FleetAgent } from './fleet.js';

/**
 * Keeps a seeded fleet true while `npm start` runs: the demo always, a fleet file with
 * `SEED_LIVE=true`. A fleet is seeded once, relative to the start: left alone, its connected
 * endpoints would turn `stale` once their heartbeat is older than the online grace, and its
 * dashboards "Observation expired" once the newest sample is older than the TTL. So, like real
 * agents, the live part of the fleet reports again every interval: a heartbeat for every connected
 * endpoint whose heartbeat was fresh at the start, and a sample for every endpoint that was
 * reporting at the start. The rest stays as seeded (for the demo, as the README describes it): a
 * stale endpoint stays stale, disconnected and never-connected ones stay so, one that went quiet
 * before the start stays quiet, and a metric never reported stays unreported.
 */

type Sample = NonNullable<FleetAgent['samples']>[number];
type Metric = 'cpu' | 'memory' | 'disk';
const METRICS: readonly Metric[] = ['cpu', 'memory', 'disk'];

/**
 * Fresh at the start: within five minutes. The demo's live heartbeats and newest samples are up to
 * 90 s old at the start (they are placed relative to the start's minute), its stale endpoint
 * stopped ten minutes before, and its quiet one reported two hours before.
 */
const LIVE_WITHIN_MS = 5 * 60_000;

/** The last value each metric had in a series, null for a metric it never reported. */
function lastValues(samples: readonly Sample[]): Record<Metric, number | null> {
  const values: Record<Metric, number | null> = { cpu: null, memory: null, disk: null };
  for (const sample of samples) {
    for (const metric of METRICS) {
      const value = sample[metric];
      if (value !== null && value !== undefined) values[metric] = value;
    }
  }
  return values;
}

/** A live agent of the demo: what it reports at every beat. */
interface LiveAgent {
  agent: FleetAgent;
  heartbeats: boolean;
  /** Each metric's last value, for an agent that was reporting; undefined for one that was not. */
  values: Record<Metric, number | null> | undefined;
}

/** The live part of a fleet seeded at `start`, per tenant: worked out once, stamped at every beat. */
type LiveFleet = { tenant_id: string; agents: LiveAgent[] }[];

function liveFleet(fleet: Fleet, start: Date): LiveFleet {
  const startMs = start.getTime();
  return fleet.tenants.map((tenant) => ({
    tenant_id: tenant.tenant_id,
    agents: (tenant.agents ?? []).flatMap((agent): LiveAgent[] => {
      const heartbeat = agent.connection?.last_heartbeat ?? agent.last_heartbeat;
      const heartbeats =
        agent.connection?.state === 'connected' && typeof heartbeat === 'string' && startMs - Date.parse(heartbeat) <= LIVE_WITHIN_MS;
      const samples = agent.samples ?? [];
      const last = samples.at(-1);
      const reporting = last !== undefined && startMs - Date.parse(last.observed_at) <= LIVE_WITHIN_MS;
      if (!heartbeats && !reporting) return [];
      return [{ agent, heartbeats, values: reporting ? lastValues(samples) : undefined }];
    }),
  }));
}

/** The live agents, each with its heartbeat at `now` and, if it was reporting, one sample at `now`. */
function pulseAt(live: LiveFleet, now: Date): Fleet {
  const at = now.toISOString();
  return {
    tenants: live.map((tenant) => ({
      tenant_id: tenant.tenant_id,
      agents: tenant.agents.map(({ agent, heartbeats, values }) => ({
        ...agent,
        ...(heartbeats && agent.connection ? { last_heartbeat: at, connection: { ...agent.connection, last_heartbeat: at } } : {}),
        samples: values ? [{ observed_at: at, ...values }] : [],
      })),
    })),
  };
}

/**
 * The part of the demo seeded at `start` that reports again at `now`: a fleet of the live agents
 * only, each with its heartbeat at `now` and, if it was reporting, one sample at `now` carrying
 * each metric's last value. Pure: the same start and now give the same fleet.
 */
export function demoPulseFleet(start: Date, now: Date): Fleet {
  return pulseAt(liveFleet(demoFleet(start), start), now);
}

/** The same for any fleet seeded at `start` (its times as seeded): what reports again at `now`. */
export function fleetPulse(fleet: Fleet, start: Date, now: Date): Fleet {
  return pulseAt(liveFleet(fleet, start), now);
}

export interface DemoPulse {
  /** Stops the beats; resolves once a write in flight has ended, so the store can be closed after it. */
  stop(): Promise<void>;
}

/**
 * Writes the live part of `fleet` (default: the demo seeded at `start`) at the time of each beat,
 * every `intervalMs`, with `write` (the fleet loader); the live agents are worked out once, not per
 * beat. A write that fails (the store is down) is reported once and tried again at the next beat.
 */
export function startDemoPulse(options: {
  start: Date;
  intervalMs: number;
  write: (fleet: Fleet) => Promise<unknown>;
  warn: (line: string) => void;
  /** A fleet seeded at `start` other than the demo (a fleet file with SEED_LIVE=true). */
  fleet?: Fleet;
}): DemoPulse {
  const live = liveFleet(options.fleet ?? demoFleet(options.start), options.start);
  let failing = false;
  let running: Promise<void> | undefined;
  const beat = async (): Promise<void> => {
    if (running !== undefined) return;
    running = writeBeat();
    await running;
  };
  const writeBeat = async (): Promise<void> => {
    try {
      await options.write(pulseAt(live, new Date()));
      if (failing) options.warn(`the ${options.fleet ? 'fleet' : 'demo'} reports again: the data store answers.`);
      failing = false;
    } catch (error) {
      if (!failing)
        options.warn(
          `warning: the ${options.fleet ? 'fleet' : 'demo'}'s heartbeats and samples could not be written (${(error as Error).name}); trying again every ${Math.round(options.intervalMs / 1000)} s.`,
        );
      failing = true;
    } finally {
      running = undefined;
    }
  };
  const timer = setInterval(() => void beat(), options.intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
