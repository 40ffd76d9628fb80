import type { ParsedFleet } from './fleet.js';

/**
 * The times of a fleet file, for `SEED=FILE`. A fleet file is loaded as written: its heartbeats and
 * samples keep their times, and the service judges them against the real clock, so a fleet written
 * last week lists its connected agents as `stale` and its dashboards as expired or empty. With
 * `SEED_LIVE=true` the start moves every time of the fleet forward by one offset, so that its newest
 * time is the start, and then keeps the agents that were live at that time reporting, as the demo
 * does (demo-pulse.ts).
 */

type Agent = ParsedFleet['tenants'][number]['agents'][number];

/** Every time an agent carries, through one function (which returns the new value). */
function mapAgentTimes(agent: Agent, move: (time: string) => string): Agent {
  const at = (time: string | null | undefined): string | null | undefined => (typeof time === 'string' ? move(time) : time);
  return {
    ...agent,
    enrolled_at: at(agent.enrolled_at),
    last_heartbeat: at(agent.last_heartbeat),
    connection: agent.connection
      ? {
          ...agent.connection,
          connected_at: at(agent.connection.connected_at),
          disconnected_at: at(agent.connection.disconnected_at),
          last_heartbeat: at(agent.connection.last_heartbeat),
        }
      : agent.connection,
    samples: agent.samples.map((sample) => ({ ...sample, observed_at: move(sample.observed_at) })),
  };
}

/**
 * The newest heartbeat or sample time in the fleet (what "now" was when it was written), or
 * undefined for a fleet with neither. Enrolment and connection times do not count: they say when
 * something began, not that the agent was still reporting.
 */
export function newestReport(fleet: ParsedFleet): Date | undefined {
  let newest = Number.NEGATIVE_INFINITY;
  const see = (time: string | null | undefined): void => {
    if (typeof time === 'string') newest = Math.max(newest, Date.parse(time));
  };
  for (const tenant of fleet.tenants) {
    for (const agent of tenant.agents) {
      see(agent.last_heartbeat);
      see(agent.connection?.last_heartbeat);
      for (const sample of agent.samples) see(sample.observed_at);
    }
  }
  return Number.isFinite(newest) ? new Date(newest) : undefined;
}

/**
 * The fleet with every time moved by the same offset, so that its newest report (newestReport) is
 * at `to`: the fleet as it was when written, happening now. A fleet without reports is unchanged.
 */
export function shiftFleet(fleet: ParsedFleet, to: Date): ParsedFleet {
  const newest = newestReport(fleet);
  if (!newest) return fleet;
  const offset = to.getTime() - newest.getTime();
  const move = (time: string): string => new Date(Date.parse(time) + offset).toISOString();
  return { tenants: fleet.tenants.map((tenant) => ({ ...tenant, agents: tenant.agents.map((agent) => mapAgentTimes(agent, move)) })) };
}

/**
 * What `npm start` says when it loads a fleet file as written whose newest report is older than
 * the online grace (its connected agents will list as stale), or undefined when it is recent.
 */
export function staleFleetNote(fleet: ParsedFleet, now: Date, onlineGraceSeconds: number): string | undefined {
  const newest = newestReport(fleet);
  if (!newest || now.getTime() - newest.getTime() <= onlineGraceSeconds * 1000) return undefined;
  return (
    `note: the fleet file's newest report is from ${newest.toISOString()}; its times are kept as written, so its connected agents list as stale ` +
    'and its observations as expired or outside the window. SEED_LIVE=true moves its times to now and keeps it reporting, as the demo does.'
  );
}
