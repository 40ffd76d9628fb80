import type { AgentSummary, ConnectionState } from '../contract/schemas.js';
import type { ConnectionRecord, DurableRecord } from '../data-format/records.js';

export interface MergeOptions {
  now: Date;
  onlineGraceSeconds: number;
}

/**
 * The newer of two optional times. Both are in the store's fixed-width UTC form
 * (`YYYY-MM-DDTHH:MM:SS.sssZ`, see lib/data-format/records.ts), so the later time is the greater string.
 */
export function newerTime(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a >= b ? a : b;
}

/** The oldest heartbeat still within the grace, in the same fixed-width form, computed once per merge. */
const edges = new WeakMap<MergeOptions, string>();
function heartbeatEdge(options: MergeOptions): string {
  let edge = edges.get(options);
  if (edge === undefined) {
    edge = new Date(options.now.getTime() - options.onlineGraceSeconds * 1000).toISOString();
    edges.set(options, edge);
  }
  return edge;
}

/**
 * Where the agent stands now. `connected` needs both a connected broker record and a heartbeat no
 * older than the grace; a connected record with an old or absent heartbeat is `stale`.
 */
export function connectionStateOf(
  connection: ConnectionRecord | undefined,
  lastHeartbeat: string | undefined,
  options: MergeOptions,
): ConnectionState {
  if (!connection) return 'never_connected';
  if (connection.state === 'disconnected') return 'disconnected';
  if (lastHeartbeat === undefined) return 'stale';
  // now - heartbeat <= grace, compared as fixed-width strings (a heartbeat ahead of now counts as within).
  return lastHeartbeat >= heartbeatEdge(options) ? 'connected' : 'stale';
}

/** One AgentSummary from an agent's records: the durable record wins, except the newer heartbeat wins. */
export function summarizeAgent(
  durable: DurableRecord | undefined,
  connection: ConnectionRecord | undefined,
  options: MergeOptions,
): AgentSummary {
  const base = durable ?? connection;
  if (!base) throw new TypeError('an agent needs a durable or a connection record');
  const lastHeartbeat = newerTime(durable?.last_heartbeat, connection?.last_heartbeat);
  const state = connectionStateOf(connection, lastHeartbeat, options);
  const summary: AgentSummary = {
    agent_id: base.agent_id,
    hostname: base.hostname,
    os: base.os,
    arch: base.arch,
    version: base.version,
    is_online: state === 'connected',
    connection_state: state,
  };
  // Optional fields are set only when known: never null, never "".
  if (durable?.client_id !== undefined) summary.client_id = durable.client_id;
  if (connection?.connected_at !== undefined) summary.connected_at = connection.connected_at;
  if (connection?.disconnected_at !== undefined) summary.disconnected_at = connection.disconnected_at;
  if (durable?.enrolled_at !== undefined) summary.enrolled_at = durable.enrolled_at;
  if (lastHeartbeat !== undefined) summary.last_heartbeat = lastHeartbeat;
  if (durable?.update_ring !== undefined) summary.update_ring = durable.update_ring;
  return summary;
}
