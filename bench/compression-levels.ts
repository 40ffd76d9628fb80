import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
import { summarizeAgent } from '../lib/inventory/merge.js';
import { realisticAgents } from '../local/generator.js';
import { median } from './stats.js';

/** gzip levels and brotli qualities measured: the service's (GZIP_LEVEL, BROTLI_QUALITY) and those around them. */
export const GZIP_LEVELS = [1, 4, 6, 9] as const;
export const BROTLI_QUALITIES = [3, 4, 5] as const;

/** One level's result on the tenant's inventory text: its size, its time and its CPU (medians). */
export interface CompressionRun {
  agents: number;
  bytes: number;
  ms: number;
  cpuMs: number;
}

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

/** Times one compression `runs` times: the median wall and CPU time, and the size. */
function timed(compress: () => Buffer, agents: number, runs: number): CompressionRun {
  const ms: number[] = [];
  const cpuMs: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    bytes = compress().length;
    ms.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
  }
  return { agents, bytes, ms: median(ms), cpuMs: median(cpuMs) };
}

/**
 * The gzip levels and brotli qualities on a realistic tenant's whole inventory, one after the other
 * in this process (the bench runs it on the function's core and Node: bench/function-core.ts), as
 * whole-buffer compressions: what each costs in CPU and gives in bytes, the basis of GZIP_LEVEL and
 * BROTLI_QUALITY (lib/json-array-stream.ts).
 */
export function compressionLevels(
  agents: number,
  now: Date,
  runs = 3,
): { gzip: (CompressionRun & { level: number })[]; brotli: (CompressionRun & { quality: number })[] } {
  const text = Buffer.from(inventoryText('bench-compression', agents, now));
  return {
    gzip: GZIP_LEVELS.map((level) => ({ level, ...timed(() => gzipSync(text, { level }), agents, runs) })),
    brotli: BROTLI_QUALITIES.map((quality) => ({
      quality,
      ...timed(
        () =>
          brotliCompressSync(text, {
            params: { [zlib.BROTLI_PARAM_QUALITY]: quality, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT },
          }),
        agents,
        runs,
      ),
    })),
  };
}
