/**
 * `npm run bench`: speed and memory of the hot paths, each quoted as a ratio against a floor measured
 * in the same run on the same machine (these machines are noisy; absolute times are printed for
 * information only). Targets are ratios; the run exits 1 when one is missed.
 *
 *  1. mergeInventory over 10,000 agents vs JSON.stringify of its own result (the handler must
 *     serialise anyway).
 *  2. evaluateDashboard over a 7-day window of 1-minute samples (10,080) down to 500 buckets vs one
 *     plain pass summing the same samples.
 *  3. GET /api/agents for a 5,000-endpoint tenant through the local stack (token check, Query pages,
 *     merge, JSON) vs GET of the JWKS on the same listener (HTTP floor).
 */
import { performance } from 'node:perf_hooks';
import { sampleSeries } from '../infra/local/demo.js';
const generatedFleet = (..._a: unknown[]): never => { throw new Error('rewritten below'); };
import { startLocalStack } from '../infra/local/stack.js';
import { config } from '../lib/config.js';
import { evaluateDashboard } from '../lib/dashboard/evaluate.js';
import { mergeInventory } from '../lib/inventory/merge.js';
import type { ConnectionRecord, DurableRecord } from '../lib/store/records.js';
import { loadFleet } from '../infra/local/fleet.js';
import { dynamo } from '../lib/store/client.js';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
function time(fn: () => unknown, runs: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
}

const results: { name: string; value: string; ratio: number; target: number }[] = [];
const record = (name: string, value: string, ratio: number, target: number): void => {
  results.push({ name, value, ratio, target });
};

// 1. merge
const now = new Date();
const durable: DurableRecord[] = [];
const connections: ConnectionRecord[] = [];
for (let i = 0; i < 10_000; i++) {
  const id = `agent-${String(i).padStart(5, '0')}`;
  const hello = { agent_id: id, hostname: `host-${i}`, os: 'linux', arch: 'x86_64', version: '2.4.1' };
  durable.push({ ...hello, client_id: 'c', client_name: 'C', enrolled_at: now.toISOString(), update_ring: 'stable', last_heartbeat: now.toISOString() });
  if (i % 2 === 0) connections.push({ ...hello, state: 'connected', connected_at: now.toISOString(), disconnected_at: undefined, last_heartbeat: now.toISOString() });
}
durable.reverse();
const opts = { now, onlineGraceSeconds: 120 };
const merged = mergeInventory(durable, connections, opts);
const mergeMs = median(time(() => mergeInventory(durable, connections, opts), 30));
const stringifyMs = median(time(() => JSON.stringify(merged), 30));
record('merge 10k agents / JSON.stringify of result', `${mergeMs.toFixed(2)} ms vs ${stringifyMs.toFixed(2)} ms`, mergeMs / stringifyMs, 10);

// 2. dashboard
const end = Math.floor(now.getTime() / 60_000) * 60_000;
const samples = sampleSeries(end, 10_080, 'gaps', Math.random).map((s) => ({
  observed_at: s.observed_at,
  cpu: s.cpu ?? null,
  memory: s.memory ?? null,
  disk: s.disk ?? null,
}));
const input = {
  endpoint: { id: 'a', hostname: 'h', os: 'linux', client_name: null, last_heartbeat: null },
  connectionState: 'connected' as const,
  windowSamples: samples,
  newestEver: null,
  policy: { ticket: 'optional' as const, thresholds: {} },
  minutes: 10_080,
  limit: 500,
  now: new Date(end),
  observationTtlSeconds: 600,
  onlineGraceSeconds: 120,
};
const evalMs = median(time(() => evaluateDashboard(input), 30));
const passMs = median(
  time(() => {
    let sum = 0;
    for (const s of samples) sum += (s.cpu ?? 0) + (s.memory ?? 0) + (s.disk ?? 0) + Date.parse(s.observed_at);
    return sum;
  }, 30),
);
record('dashboard 10,080 samples -> 500 buckets / one summing pass', `${evalMs.toFixed(2)} ms vs ${passMs.toFixed(2)} ms`, evalMs / passMs, 25);

// 3. HTTP through the local stack
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
const heapBefore = process.memoryUsage().heapUsed;
const stack = await startLocalStack({ port: 0, privatePort: 0, dynamoPort: 0, seed: 'none', quiet: true, localDir: '.local/bench' });
const cfg = config();
await loadFleet(dynamo(), cfg, generatedFleet('bench', 5_000, 0, now), cfg.sampleRetentionDays);
const token = await stack.issuer.sign({ issuer: cfg.jwtIssuer, audience: cfg.jwtAudience, tenant: 'bench', tenantClaim: cfg.tenantClaim });
const timeRequests = async (url: string, headers: Record<string, string>, runs: number): Promise<number[]> => {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    out.push(performance.now() - t);
  }
  return out;
};
await timeRequests(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${token}` }, 3);
const floor = await timeRequests(`${stack.publicUrl}/.well-known/jwks.json`, {}, 50);
const list = await timeRequests(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${token}` }, 20);
const heapAfter = process.memoryUsage().heapUsed;
await stack.stop();
record(
  'GET /api/agents, 5,000 endpoints, p50 / JWKS p50',
  `p50 ${median(list).toFixed(1)} ms, p99 ${percentile(list, 99).toFixed(1)} ms vs ${median(floor).toFixed(2)} ms`,
  median(list) / median(floor),
  2000,
);

let failed = false;
for (const r of results) {
  const ok = r.ratio <= r.target;
  failed ||= !ok;
  process.stdout.write(`${ok ? 'ok  ' : 'MISS'} ${r.name}: ${r.value} -> ratio ${r.ratio.toFixed(1)} (target <= ${r.target})\n`);
}
process.stdout.write(`heap growth during the HTTP run (engine, 5,000 agents, 20 lists): ${((heapAfter - heapBefore) / 1048576).toFixed(1)} MiB\n`);
process.exit(failed ? 1 : 0);
