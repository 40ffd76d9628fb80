import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { INVENTORY_ALL_HEAP_FLAGS } from '../infra/inventory-heap.js';
import { agentsPartition } from '../lib/data-format/keys.js';
import { BROTLI_QUALITY, GZIP_LEVEL, STREAMED_RESPONSE_LIMIT_BYTES, StreamedResponseTooLargeError } from '../lib/json-array-stream.js';
import { writeTenantAgents } from '../local/fleet.js';
import { realisticAgents } from '../local/generator.js';
import type { BenchContext } from './context.js';
import type { CpuFloorRun } from './cpu-floor.js';
import { httpGet } from './floors.js';
import { runCpuFloor } from './processes.js';
import type { FreshFigure, FreshFloorFigure } from './report.js';
import { type FreshRun, invokeFresh, invokeWarm, stackFunction } from './sandbox.js';
import { at, interleaved, median, n } from './stats.js';
import type { ThreadCpu } from './thread-cpu.js';

/** Realistic tenants measured: the full run's sizes are those of large MSP and enterprise tenants. */
export const inventorySizes = (quick: boolean): number[] => (quick ? [10_000, 30_000] : [100_000, 300_000, 1_000_000]);
export const tenantOf = (agents: number): string => `bench-${agents}`;
/** Pages of the wire floor kept for the CPU floor (a sample: the floor is stated per 1,000 agents). */
const CPU_FLOOR_PAGES = 40;
/**
 * How far apart two answers of one tenant may be and still count as the same answer: the floor's
 * JSON against the function's, a fresh instance's bytes against the floor's. Their states follow
 * the time of each read (an agent may turn stale between two), so they may differ by a few bytes.
 */
const SAME_ANSWER_TOLERANCE = 0.01;

function runsFor(quick: boolean, agents: number): number {
  if (quick) return 3;
  return agents >= 1_000_000 ? 2 : agents >= 300_000 ? 3 : 5;
}

/** Seeds each tenant through the writer of `npm run seed -- --generate` (the engine in its own process). */
export async function seedInventoryTenants(ctx: BenchContext): Promise<void> {
  for (const agents of inventorySizes(ctx.quick)) {
    const started = performance.now();
    const written = await writeTenantAgents(
      ctx.db,
      { dataTable: ctx.dataTable },
      tenantOf(agents),
      realisticAgents(tenantOf(agents), agents, { now: ctx.now }),
      8,
    );
    ctx.results.seeding.push({ agents, items: written.items, seconds: (performance.now() - started) / 1000 });
    ctx.say(`seeded ${n(agents)} agents (${n(written.items)} items) in ${at(ctx.results.seeding, -1).seconds.toFixed(1)} s`);
  }
}

/** The sizes whose times have targets (100,000 and 1,000,000 agents; every size of a quick run): br is measured beside gzip there. */
export const timedSizes = (quick: boolean, agents: number): boolean => quick || agents === 100_000 || agents === 1_000_000;

/**
 * The agents an inventory answer lists, in order, as a count and a digest of their ids: what a br
 * and a gzip answer of one tenant share. Their bytes may differ, since a state follows the time of
 * the read (an agent turns stale between two runs of a slow bench).
 */
export function listedAgents(json: Buffer): { count: number; digest: string } {
  const hash = createHash('sha256');
  const key = Buffer.from('"agent_id":"');
  let count = 0;
  for (let at = json.indexOf(key); at !== -1; at = json.indexOf(key, at)) {
    const start = at + key.length;
    const end = json.indexOf(0x22, start);
    hash.update(json.subarray(start, end)).update('\n');
    count++;
    at = end;
  }
  return { count, digest: hash.digest('hex') };
}

/** One warm invocation's figures. */
interface Timing {
  firstByteMs: number;
  ms: number;
  status: number;
  bytes: number;
}

/**
 * GET /api/agents, streamed, for each tenant size, interleaved: the wire floor (the same Query
 * pages as raw HTTP, discarded) and the read floor (the same, each page also parsed), both read on
 * the function's core; the handler (the deployed bundle in its sandbox, a warm instance on the
 * function's core, invoked through its Runtime API and read on the other core: first byte and end);
 * the same bundle called in the process on the function's core (the in-process call: the process
 * boundary's share is the handler's time over it); the local stack over HTTP (the same sandboxes
 * behind its gateway); and, at the timed sizes, the handler for a client that prefers br. Then the
 * CPU floor on a sample of the pages; one invocation in a fresh instance (peak RSS, CPU, first
 * byte), with br too at the timed sizes; and the inventory sandboxes' peak resident memory once
 * the stack has streamed the tenant.
 */
export async function inventoryFigure(ctx: BenchContext): Promise<void> {
  ctx.results.freshHeapFlags = INVENTORY_ALL_HEAP_FLAGS.join(' ');
  ctx.results.brotliQuality = BROTLI_QUALITY;
  const inventory = stackFunction(ctx.stack.functions, 'inventory');
  const timeoutMs = ctx.stack.functions.specs.inventory.timeoutSeconds * 1000;
  for (const agents of inventorySizes(ctx.quick)) {
    const tenant = tenantOf(agents);
    const pk = agentsPartition(tenant);
    const token = await ctx.issuer.sign({
      issuer: ctx.issuerUrl,
      audience: ctx.audience,
      tenant,
      subject: 'bench',
      scope: ctx.cfg.requiredScope,
    });
    const runs = runsFor(ctx.quick, agents);
    const withBr = timedSizes(ctx.quick, agents);
    ctx.say(
      `inventory, ${n(agents)} agents: wire and read floors, handler, in-process call and HTTP${withBr ? ', handler with br' : ''}, ${runs} interleaved runs`,
    );
    const wire: { ms: number; firstPageMs: number; pages: number; bytes: number }[] = [];
    const read: number[] = [];
    const handler: Timing[] = [];
    const inProcess: Timing[] = [];
    const http: Timing[] = [];
    const br: Timing[] = [];
    let cpu: { agents: number; perThousandAgentsMs: number } | undefined;
    let lastGzipBody: Buffer = Buffer.alloc(0);
    let lastBrBody: Buffer = Buffer.alloc(0);
    const wireArgs = { endpoint: ctx.engineEndpoint, table: ctx.dataTable, pk };
    const sandboxed = async (acceptEncoding: string, into: Timing[]): Promise<Buffer> => {
      const answer = await invokeWarm(inventory, ctx.inventoryEvent(tenant, acceptEncoding), true);
      if (answer.failedWith) throw new Error(`the inventory failed mid-stream (${acceptEncoding}): ${answer.failedWith}`);
      into.push({ firstByteMs: answer.firstByteMs, ms: answer.ms, status: answer.status, bytes: answer.bytes });
      return answer.kept ?? Buffer.alloc(0);
    };
    const subjects: Record<string, () => Promise<unknown>> = {
      wire: async () => {
        const run = await ctx.functionCore.run('wire', { ...wireArgs, cpuFloorPages: cpu ? 0 : CPU_FLOOR_PAGES, gzipLevel: GZIP_LEVEL });
        cpu ??= run.cpu;
        wire.push(run);
      },
      read: async () => {
        const run = await ctx.functionCore.run('wire', { ...wireArgs, parse: true });
        read.push(run.ms);
      },
      handler: async () => {
        lastGzipBody = await sandboxed('gzip', handler);
      },
      inProcess: async () => {
        const run = await ctx.functionCore.run('invokeInventory', {
          bundle: ctx.bundleOf('inventory'),
          event: ctx.inventoryEvent(tenant),
          timeoutMs,
        });
        if (run.failedWith || run.status !== 200)
          throw new Error(`the in-process inventory answered ${run.status} ${run.failedWith ?? ''}`);
        inProcess.push(run);
      },
      http: async () => {
        const res = await httpGet(`${ctx.stack.publicUrl}/api/agents`, { Authorization: `Bearer ${token}`, 'Accept-Encoding': 'gzip' });
        http.push({ firstByteMs: res.firstByteMs, ms: res.ms, status: res.status, bytes: res.bytes });
      },
    };
    if (withBr) {
      subjects.br = async () => {
        lastBrBody = await sandboxed('br', br);
      };
    }
    await interleaved(subjects, runs, agents >= 300_000 ? 0 : 1);
    // The warm-up round (when there is one) is the first entry of each list: drop it.
    const measured = <T>(list: T[]): T[] => list.slice(list.length - runs);
    const w = measured(wire);
    const h = measured(handler);
    const ip = measured(inProcess);
    const ht = measured(http);
    const b = measured(br);
    // The JSON's size, from the last measured gzip answer; the last br answer must list the same agents.
    const gzipJson = gunzipSync(lastGzipBody);
    const jsonBytes = gzipJson.length;
    if (withBr) {
      const [gzipped, brotli] = [listedAgents(gzipJson), listedAgents(brotliDecompressSync(lastBrBody))];
      if (gzipped.count !== agents || brotli.count !== agents || gzipped.digest !== brotli.digest)
        throw new Error(`the br answer does not list the gzip answer's agents (${brotli.count} and ${gzipped.count} of ${agents})`);
    }
    lastGzipBody = Buffer.alloc(0);
    lastBrBody = Buffer.alloc(0);
    // What a client without compression gets (past 200 MB: a transfer broken at the limit), counted as it comes, not held.
    const plain = await invokeWarm(inventory, ctx.inventoryEvent(tenant, ''));
    // Past the limit the function fails before the byte that would cross it, and a failure in the
    // body's pipeline cuts the stream (AWS's runtime client destroys its request; so does ours), so
    // the error's name may not come back: a cut in the last megabyte before the limit is that stop.
    const stoppedAtLimit =
      plain.failedWith === StreamedResponseTooLargeError.name ||
      (plain.failedWith !== undefined &&
        plain.bytes <= STREAMED_RESPONSE_LIMIT_BYTES &&
        plain.bytes > STREAMED_RESPONSE_LIMIT_BYTES - 1_000_000);
    const plainOutcome =
      plain.failedWith === undefined ? 'complete' : stoppedAtLimit ? 'stopped before the 200 MB limit' : `failed: ${plain.failedWith}`;
    if (!cpu) throw new Error('the wire floor kept no pages for the CPU floor');
    // What the stack's inventory sandboxes held at their peak, this tenant streamed through them.
    const stackPeakRssMiB = ctx.stack.functions.stats('inventory').peakRssBytes / 1_048_576;
    ctx.say(
      `  fresh instances and the CPU floor over the whole tenant (CPU, peak RSS), ${n(freshRounds(ctx.quick, agents))} interleaved rounds`,
    );
    const fresh = await freshFigures(ctx, tenant, withBr ? ['gzip', 'br'] : ['gzip'], freshRounds(ctx.quick, agents));
    for (const coding of ['gzip', 'br'] as const) {
      // The floor does the same work: the same answer's JSON, its states as of its own run (an agent may turn stale between two).
      for (const floorRun of fresh.floor[coding]) {
        if (Math.abs(floorRun.jsonBytes - jsonBytes) > jsonBytes * SAME_ANSWER_TOLERANCE || floorRun.agents !== agents)
          throw new Error(
            `the CPU floor made ${n(floorRun.agents)} agents in ${n(floorRun.jsonBytes)} B of JSON, the function ${n(agents)} in ${n(jsonBytes)} B`,
          );
      }
    }
    const freshGzip = fresh.function.gzip;
    const freshBr = fresh.function.br;
    const wireMs = median(w.map((r) => r.ms));
    const pages = at(w).pages;
    ctx.results.inventory.push({
      agents,
      runs,
      pages,
      wire: { ms: wireMs, firstPageMs: median(w.map((r) => r.firstPageMs)), pageMs: wireMs / pages, bytes: at(w).bytes },
      readFloorMs: median(measured(read)),
      handler: { ms: median(h.map((r) => r.ms)), firstByteMs: median(h.map((r) => r.firstByteMs)), status: at(h).status },
      inProcess: { ms: median(ip.map((r) => r.ms)), firstByteMs: median(ip.map((r) => r.firstByteMs)), status: at(ip).status },
      http: {
        ms: median(ht.map((r) => r.ms)),
        firstByteMs: median(ht.map((r) => r.firstByteMs)),
        status: at(ht).status,
        sandboxPeakRssMiB: stackPeakRssMiB,
      },
      bytes: { json: jsonBytes, gzip: at(h).bytes, plainSent: plain.bytes, plainOutcome },
      cpuFloor: { sampleAgents: cpu.agents, perThousandAgentsMs: cpu.perThousandAgentsMs },
      freshFloor: {
        gzip: floorFigure(fresh.floor.gzip, agents),
        br: fresh.floor.br.length > 0 ? floorFigure(fresh.floor.br, agents) : undefined,
      },
      fresh: {
        ...freshFigure(freshGzip, agents),
        firstByteMs: median(freshGzip.map((f) => f.firstByteMs)),
        invokeMs: median(freshGzip.map((f) => f.invokeMs)),
      },
      ...(freshBr.length > 0
        ? {
            br: {
              ms: median(b.map((r) => r.ms)),
              firstByteMs: median(b.map((r) => r.firstByteMs)),
              status: at(b).status,
              bytes: at(b).bytes,
              fresh: freshFigure(freshBr, agents),
            },
          }
        : {}),
    });
    const r = at(ctx.results.inventory, -1);
    ctx.say(
      `  ${n(pages)} pages; wire ${n(r.wire.ms)} ms (first page ${n(r.wire.firstPageMs)} ms); read floor ${n(r.readFloorMs ?? 0)} ms; handler ${n(r.handler.ms)} ms (first byte ${n(r.handler.firstByteMs)} ms); ` +
        `in-process ${n(r.inProcess?.ms ?? 0)} ms; HTTP ${n(r.http.ms)} ms (first byte ${n(r.http.firstByteMs)} ms); gzip ${n(r.bytes.gzip)} B, JSON ${n(r.bytes.json)} B; ` +
        `CPU ${r.fresh.cpuPerThousandAgentsMs.toFixed(1)} ms/1k agents (floor over the whole tenant ${r.freshFloor?.gzip.cpuPerThousandAgentsMs.toFixed(1)}, warm sample ${r.cpuFloor.perThousandAgentsMs.toFixed(1)}); fresh ${n(r.fresh.maxRssMiB)} MiB; ` +
        `the stack's inventory sandboxes at most ${n(stackPeakRssMiB)} MiB` +
        (r.br
          ? `; br ${n(r.br.bytes)} B in ${n(r.br.ms)} ms (first byte ${n(r.br.firstByteMs)} ms), CPU ${r.br.fresh.cpuPerThousandAgentsMs.toFixed(1)} ms/1k agents (floor ${r.freshFloor?.br?.cpuPerThousandAgentsMs.toFixed(1)})`
          : ''),
    );
  }
}

/** Rounds of fresh instances and CPU floor runs: the timed sizes' figures are medians of several. */
function freshRounds(quick: boolean, agents: number): number {
  if (quick) return 2;
  return agents >= 1_000_000 ? 2 : agents >= 300_000 ? 1 : 3;
}

/**
 * The function's fresh instances (a cold Lambda each, its CPU and peak RSS read from /proc) and
 * the CPU floor over the whole tenant (bench/cpu-floor.ts: a fresh process with the function's
 * Node, NODE_OPTIONS and core), interleaved: in every round, for each coding, one of each, back to
 * back, so that drift on a shared machine falls on both alike.
 */
async function freshFigures(
  ctx: BenchContext,
  tenant: string,
  codings: readonly ('gzip' | 'br')[],
  rounds: number,
): Promise<{ function: Record<'gzip' | 'br', FreshRun[]>; floor: Record<'gzip' | 'br', CpuFloorRun[]> }> {
  const out = { function: { gzip: [] as FreshRun[], br: [] as FreshRun[] }, floor: { gzip: [] as CpuFloorRun[], br: [] as CpuFloorRun[] } };
  const nodeOptions = ctx.stack.functions.environment('inventory').NODE_OPTIONS ?? '';
  for (let round = 0; round < rounds; round++) {
    for (const coding of codings) {
      const run = await invokeFresh(ctx.freshSandbox('inventory'), ctx.inventoryEvent(tenant, coding));
      const floorRun = await runCpuFloor({
        node: ctx.runtime.node.path,
        cpus: ctx.runtime.cpus,
        bundle: ctx.cpuFloorBundle,
        nodeOptions,
        run: {
          endpoint: ctx.engineEndpoint,
          table: ctx.dataTable,
          pk: agentsPartition(tenant),
          coding,
          heartbeatEdge: new Date(Date.now() - ctx.cfg.onlineGraceSeconds * 1000).toISOString(),
        },
      });
      checkFreshRun(coding, run, floorRun);
      out.function[coding].push(run);
      out.floor[coding].push(floorRun);
    }
  }
  return out;
}

/**
 * Holds a fresh instance's run to the floor's run of the same round and coding, as the floor is held
 * to the function's answer: a complete 200 answer whose bytes are the floor's within 1% (an agent may
 * turn stale between the two), and a CPU reading (0 when the pool never saw the answer complete, or
 * /proc could not be read). A run that failed, was cut or was not read would lower the median CPU and
 * let the function pass its target against the floor falsely.
 */
export function checkFreshRun(
  coding: 'gzip' | 'br',
  run: Pick<FreshRun, 'status' | 'failedWith' | 'bytes' | 'cpuMs'>,
  floor: Pick<CpuFloorRun, 'bytes'>,
): void {
  if (run.status !== 200 || run.failedWith !== undefined)
    throw new Error(
      `a fresh inventory instance (${coding}) answered ${run.status}${run.failedWith === undefined ? '' : `, then failed mid-stream: ${run.failedWith}`}`,
    );
  if (!(run.cpuMs > 0))
    throw new Error(
      `a fresh inventory instance (${coding}) has no CPU reading: the pool never saw its answer complete, or /proc could not be read`,
    );
  if (Math.abs(run.bytes - floor.bytes) > floor.bytes * SAME_ANSWER_TOLERANCE)
    throw new Error(
      `a fresh inventory instance (${coding}) sent ${n(run.bytes)} B, the CPU floor's answer is ${n(floor.bytes)} B: more than 1% apart`,
    );
}

/** A fresh instance's runs of one coding as the results hold them (gzip's and br's alike): medians. */
function freshFigure(runs: readonly FreshRun[], agents: number): FreshFigure {
  const cpuMs = median(runs.map((r) => r.cpuMs));
  return {
    status: at(runs).status,
    maxRssMiB: median(runs.map((r) => r.maxRssMiB)),
    cpuMs,
    cpuPerThousandAgentsMs: (cpuMs * 1000) / agents,
    runs: runs.length,
    threads: medianThreads(runs.map((r) => r.threads)),
  };
}

/** The floor's runs as the results hold them: medians. */
export function floorFigure(runs: readonly CpuFloorRun[], agents: number): FreshFloorFigure {
  const cpuMs = median(runs.map((r) => r.cpuMs));
  return {
    runs: runs.length,
    cpuMs,
    cpuPerThousandAgentsMs: (cpuMs * 1000) / agents,
    maxRssMiB: median(runs.map((r) => r.maxRssMiB)),
    jsonBytes: median(runs.map((r) => r.jsonBytes)),
    bytes: median(runs.map((r) => r.bytes)),
    threads: medianThreads(runs.map((r) => r.threads)),
  };
}

/** The median of each thread kind's CPU over runs (undefined when no run could read its threads). */
export function medianThreads(runs: readonly (ThreadCpu | undefined)[]): ThreadCpu | undefined {
  const read = runs.filter((t): t is ThreadCpu => t !== undefined);
  if (read.length === 0) return undefined;
  return {
    mainMs: median(read.map((t) => t.mainMs)),
    gcHelpersMs: median(read.map((t) => t.gcHelpersMs)),
    poolMs: median(read.map((t) => t.poolMs)),
    otherMs: median(read.map((t) => t.otherMs)),
  };
}

/** The largest realistic tenant a streamed answer can carry, plain and gzip, from the largest tenant's bytes per agent. */
export function streamedLimitAgents(r: BenchContext['results']): { plain: number; gzip: number } | undefined {
  const largest = r.inventory.at(-1);
  if (!largest) return undefined;
  return {
    plain: Math.floor((STREAMED_RESPONSE_LIMIT_BYTES * largest.agents) / largest.bytes.json),
    gzip: Math.floor((STREAMED_RESPONSE_LIMIT_BYTES * largest.agents) / largest.bytes.gzip),
  };
}
