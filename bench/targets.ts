import { STREAMED_RESPONSE_LIMIT_BYTES } from '../lib/json-array-stream.js';
import { streamedLimitAgents, timedSizes } from './inventory.js';
import { type BenchResults, cpuAgainstFloor, mcpSdkRatio, sampledRatio, type Target } from './report.js';
import { n } from './stats.js';

/** Lambda streams a response's first 6 MB at full speed, then at most 2 MB/s. */
const UNCAPPED_BYTES = 6_000_000;
const CAPPED_BYTES_PER_SECOND = 2_000_000;
/** Lambda gives one vCPU at 1,769 MB, in proportion below. */
const ONE_VCPU_MB = 1_769;
const MEMORY_SIZES = [512, 1_024, 1_536, 1_769, 2_048, 3_008];

/**
 * Each bundle's size target. The MCP door has none: it carries the MCP SDK and its protocol schemas,
 * every way under 500 KiB that was measured started slower, and its cold start is what counts (a
 * target of its own below); its size is reported all the same.
 */
export const BUNDLE_TARGETS_KIB: Readonly<Record<string, number>> = Object.freeze({ inventory: 400, observations: 400 });
/** The functions whose cold start has a target against the bare-SDK bundle's; the MCP door's is against the bare MCP SDK (when measured). */
const COLD_START_TARGETS: readonly string[] = ['inventory', 'observations', 'mcp'];
/** The inventory's CPU against the CPU floor over the whole tenant (bench/cpu-floor.ts), and the MCP door's cold start against the bare MCP SDK's. */
const CPU_FLOOR_RATIO = 1.25;
const MCP_COLD_START_RATIO = 1.25;
/** br's CPU may exceed gzip's by this much and still count as equal (the fresh instances' CPU, each coding's the median of its rounds). */
const BR_CPU_TOLERANCE = 1.05;

/** Seconds a streamed answer of `bytes` takes on Lambda's side of the wire, whatever the function's speed. */
export const streamSeconds = (bytes: number): number => Math.max(0, bytes - UNCAPPED_BYTES) / CAPPED_BYTES_PER_SECOND;

export function targets(r: BenchResults): Target[] {
  const out: Target[] = [];
  const ratio = (v: number): string => `${v.toFixed(2)}x`;
  const largest = r.inventory.at(-1)?.agents;
  const timed = r.inventory.filter((i) => timedSizes(r.mode === 'quick', i.agents));
  for (const i of timed) {
    for (const [what, run] of [
      ['handler in its sandbox', i.handler],
      ['over HTTP', i.http],
    ] as const) {
      const total = run.ms / i.wire.ms;
      out.push({
        what: `inventory ${what}, ${n(i.agents)} agents: total time`,
        target: '<= 1.3x wire floor',
        measured: ratio(total),
        met: total <= 1.3,
      });
    }
  }
  for (const i of r.inventory) {
    const firstByteBound = i.wire.firstPageMs + i.wire.pageMs;
    out.push({
      what: `inventory handler, ${n(i.agents)} agents: first byte`,
      target: "<= wire floor's first page + one page",
      measured: `${n(i.handler.firstByteMs)} ms (bound ${n(firstByteBound)} ms)`,
      met: i.handler.firstByteMs <= firstByteBound,
    });
  }
  for (const i of timed) {
    if (!i.freshFloor) {
      // Runs from before the CPU floor over the whole tenant: the warm sample, with its target of then.
      const cpu = i.fresh.cpuPerThousandAgentsMs / i.cpuFloor.perThousandAgentsMs;
      out.push({
        what: `inventory function process CPU per 1,000 agents, ${n(i.agents)} agents (fresh instance)`,
        target: '<= 1.3x CPU floor',
        measured: `${i.fresh.cpuPerThousandAgentsMs.toFixed(1)} ms against ${i.cpuFloor.perThousandAgentsMs.toFixed(1)} ms (${ratio(cpu)})`,
        met: cpu <= 1.3,
      });
      continue;
    }
    for (const { coding, fn, floor, ratio: cpu } of cpuAgainstFloor(i)) {
      out.push({
        what: `inventory function process CPU per 1,000 agents, ${n(i.agents)} agents, ${coding} (fresh instance)`,
        target: `<= ${CPU_FLOOR_RATIO}x the CPU floor over the whole tenant`,
        measured: `${fn.cpuPerThousandAgentsMs.toFixed(1)} ms against ${floor.cpuPerThousandAgentsMs.toFixed(1)} ms (${ratio(cpu)})`,
        met: cpu <= CPU_FLOOR_RATIO,
      });
    }
  }
  for (const i of timed) {
    if (!i.br) continue;
    const bytes = i.br.bytes / i.bytes.gzip;
    const cpu = i.br.fresh.cpuPerThousandAgentsMs / i.fresh.cpuPerThousandAgentsMs;
    out.push({
      what: `inventory with br, ${n(i.agents)} agents: bytes and the function's CPU against gzip`,
      target: `fewer bytes, CPU <= ${BR_CPU_TOLERANCE}x gzip's`,
      measured: `${(i.br.bytes / 1_000_000).toFixed(2)} MB against ${(i.bytes.gzip / 1_000_000).toFixed(2)} MB (${ratio(bytes)}), CPU ${ratio(cpu)}`,
      met: bytes < 1 && cpu <= BR_CPU_TOLERANCE,
    });
  }
  for (const i of r.inventory.filter((x) => x.http.sandboxPeakRssMiB !== undefined)) {
    out.push({
      what: `the stack's inventory sandboxes, peak RSS once ${n(i.agents)} agents were streamed`,
      target: '<= 256 MB',
      measured: `${n((i.http.sandboxPeakRssMiB ?? 0) * 1.048576)} MB`,
      met: (i.http.sandboxPeakRssMiB ?? 0) * 1.048576 <= 256,
    });
  }
  const big = r.inventory.find((i) => i.agents === largest);
  if (big)
    out.push({
      what: `peak RSS, ${n(big.agents)} agents, fresh process`,
      target: '<= 256 MB',
      measured: `${n(big.fresh.maxRssMiB * 1.048576)} MB`,
      met: big.fresh.maxRssMiB * 1.048576 <= 256,
    });
  if (r.scopedInventory) {
    const { agents, unscoped: u, scoped: sc } = r.scopedInventory;
    out.push({
      what: `scoped inventory handler, ${n(agents)} agents: total time`,
      target: '<= 1.1x unscoped',
      measured: ratio(sc.ms / u.ms),
      met: sc.ms / u.ms <= 1.1,
    });
    out.push({
      what: `scoped inventory peak RSS, ${n(agents)} agents, fresh process`,
      target: '<= 256 MB',
      measured: `${n(sc.maxRssMiB * 1.048576)} MB`,
      met: sc.maxRssMiB * 1.048576 <= 256,
    });
  }
  for (const o of r.observations) {
    // A short window: against the floor making the same two sequential round trips (the reads, then
    // the audit write), which the one-Query floor cannot make; a long one: the window's read dominates.
    if (o.minutes <= 60) {
      out.push({
        what: `observations handler, ${o.minutes}-minute window`,
        target: '<= 2x the floor making its requests',
        measured: ratio(o.requestsRatio),
        met: o.requestsRatio <= 2,
      });
    } else {
      out.push({
        what: `observations handler, ${o.minutes}-minute window`,
        target: '<= 1.2x one-Query floor',
        measured: ratio(o.handlerRatio),
        met: o.handlerRatio <= 1.2,
      });
    }
  }
  for (const b of r.bundles) {
    const kib = BUNDLE_TARGETS_KIB[b.name];
    if (kib === undefined) continue; // the floor, and the MCP variant that is not deployed
    out.push({
      what: `${b.name} bundle`,
      target: `<= ${kib} KiB`,
      measured: `${(b.bytes / 1024).toFixed(0)} KiB`,
      met: b.bytes <= kib * 1024,
    });
  }
  // From spawn to the first answer, each doing its real work; the MCP door built with the runtime's SDK is shown without a target.
  // Judged on an invocation X-Ray does not sample, as the floors (which record no trace) run; the
  // sampled one, which also loads and runs the tracer, is shown beside it.
  for (const c of r.coldStart.filter((x) => COLD_START_TARGETS.includes(x.name))) {
    const mcpRatio = c.name === 'mcp' ? mcpSdkRatio(r, c.name) : undefined;
    const againstFloor = sampledRatio(r, c.name);
    const sampled = againstFloor === undefined ? '' : ` (sampled by X-Ray: ${ratio(againstFloor)})`;
    if (mcpRatio !== undefined) {
      out.push({
        what: 'mcp cold start',
        target: `<= ${MCP_COLD_START_RATIO}x bare MCP-SDK bundle`,
        measured: `${ratio(mcpRatio)}${sampled}`,
        met: mcpRatio <= MCP_COLD_START_RATIO,
      });
      continue;
    }
    out.push({
      what: `${c.name} cold start`,
      target: '<= 1.5x bare-SDK bundle',
      measured: `${ratio(c.ratio)}${sampled}`,
      met: c.ratio <= 1.5,
    });
  }
  return out;
}

/**
 * The inventory function's memory size and timeout, from what was measured on the largest tenant:
 * - memory: the smallest size whose CPU share (one vCPU at 1,769 MB) does the largest tenant's CPU
 *   within the time Lambda takes to stream its answer anyway (6 MB at once, then 2 MB/s), so the
 *   client never waits on the CPU, but no more than one vCPU (the work runs on one JavaScript
 *   thread: a second vCPU would not shorten it), and at least twice its peak RSS;
 * - timeout: the longest an answer can stream (200 MB: 97 s on Lambda's side of the wire) or the
 *   CPU time of the tenant that fills it at that memory, whichever is longer, plus half again,
 *   rounded up to a minute (at most 15 minutes, API Gateway's limit too).
 */
export function sizing(r: BenchResults): BenchResults['sizing'] {
  const largest = r.inventory.at(-1);
  const limit = streamedLimitAgents(r);
  if (!largest || !limit) return undefined;
  const cpuSeconds = largest.fresh.cpuMs / 1000;
  const wireSeconds = streamSeconds(largest.bytes.gzip);
  const forCpu = wireSeconds > 0 ? (cpuSeconds * ONE_VCPU_MB) / wireSeconds : ONE_VCPU_MB;
  const memoryMb = MEMORY_SIZES.find((s) => s >= Math.max(Math.min(forCpu, ONE_VCPU_MB), largest.fresh.maxRssMiB * 2)) ?? 3_008;
  const limitCpuSeconds = ((cpuSeconds / largest.agents) * limit.gzip * ONE_VCPU_MB) / memoryMb;
  const longest = Math.max(streamSeconds(STREAMED_RESPONSE_LIMIT_BYTES), limitCpuSeconds);
  const timeoutSeconds = Math.min(900, Math.ceil((longest * 1.5) / 60) * 60);
  return {
    basis: `${n(largest.agents)}-agent`,
    cpuSeconds,
    maxRssMiB: largest.fresh.maxRssMiB,
    wireSeconds,
    memoryMb,
    cpuSecondsAtMemory: (cpuSeconds * ONE_VCPU_MB) / memoryMb,
    limitAgents: limit,
    limitCpuSeconds,
    timeoutSeconds,
  };
}
