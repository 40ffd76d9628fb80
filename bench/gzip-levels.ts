import { gzipSync } from 'node:zlib';
import { realisticAgents } from '../infra/local/generator.js';
import { summarizeAgent } from '../lib/inventory/merge.js';
import type { BenchContext } from './context.js';
import { median } from './stats.js';

/** A generated tenant's inventory text as the service serializes it, without the store. */
function inventoryText(tenant: string, agents: number, now: Date): string {
  const options = { now, onlineGraceSeconds: 120 };
  const parts: string[] = [];
  for (const a of realisticAgents(tenant, agents, { now })) {
    const hello = { agent_id: a.agent_id, hostname: a.hostname, os: a.os, arch: a.arch, version: a.version };
    const durable =
      a.durable === false
        ? undefined
        : {
            ...hello,
            client_id: a.client_id ?? undefined,
            enrolled_at: a.enrolled_at ?? undefined,
            update_ring: a.update_ring ?? undefined,
            last_heartbeat: a.last_heartbeat ?? undefined,
          };
    const connection = a.connection
      ? {
          ...hello,
          state: a.connection.state,
          connected_at: a.connection.connected_at ?? undefined,
          disconnected_at: a.connection.disconnected_at ?? undefined,
          last_heartbeat: a.connection.last_heartbeat ?? a.last_heartbeat ?? undefined,
        }
      : undefined;
    parts.push(JSON.stringify(summarizeAgent(durable, connection, options)));
  }
  return `[${parts.join(',')}]`;
}

/** gzip levels 1, 4, 6 and 9 on a realistic 10,000-agent inventory: size and time (the service's level is chosen from this). */
export function gzipLevelsFigure(ctx: BenchContext): void {
  ctx.say('gzip levels');
  const agents = 10_000;
  const text = inventoryText('bench-gzip', agents, ctx.now);
  for (const level of [1, 4, 6, 9]) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      bytes = gzipSync(text, { level }).length;
      times.push(performance.now() - started);
    }
    ctx.results.gzipLevels.push({ level, agents, bytes, ms: median(times) });
  }
}
