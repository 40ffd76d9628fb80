import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProfileFigure } from './cpu-profile.js';
import { at, n } from './stats.js';
import type { ThreadCpu } from './thread-cpu.js';

export interface Target {
  what: string;
  target: string;
  measured: string;
  met: boolean;
}

/** The CPU floor over a whole tenant in fresh processes (bench/cpu-floor.ts): medians of its runs. */
export interface FreshFloorFigure {
  runs: number;
  /** The process's CPU from its start (user and system, every thread). */
  cpuMs: number;
  cpuPerThousandAgentsMs: number;
  maxRssMiB: number;
  /** The answer's JSON it made, and its compressed bytes: the function's, when the floor does the same work. */
  jsonBytes: number;
  bytes: number;
  threads?: ThreadCpu | undefined;
}

export interface BenchResults {
  date: string;
  mode: 'full' | 'quick';
  /**
   * `node`: the tooling's (the bench's own process); `functionNode`: the sandboxes' (absent in runs
   * before they ran Lambda's Node); `cores`: how the cores were split (bench/cores.ts; absent in
   * runs before the function had a core of its own).
   */
  machine: { cpus: number; model: string; node: string; functionNode?: string; cores?: string };
  gzipLevel: number;
  inventory: {
    agents: number;
    runs: number;
    /** Query pages of the tenant's partition. */
    pages: number;
    /** The wire floor: the same Query pages as raw HTTP, discarded. */
    wire: { ms: number; firstPageMs: number; pageMs: number; bytes: number };
    /** The read floor: the same pages, the next asked for before each is parsed as JSON (absent in runs before it was measured). */
    readFloorMs?: number;
    /** The deployed bundle in its sandbox (a warm instance), invoked as Lambda invokes it. */
    handler: { ms: number; firstByteMs: number; status: number };
    /** The same bundle called in a process on the function's core, no Runtime API between (absent in runs before it was measured). */
    inProcess?: { ms: number; firstByteMs: number; status: number };
    /** The handler for a client that prefers br, and a fresh instance's CPU and peak RSS for it (at the timed sizes; absent before br). */
    br?: {
      ms: number;
      firstByteMs: number;
      status: number;
      bytes: number;
      fresh: {
        status: number;
        maxRssMiB: number;
        cpuMs: number;
        cpuPerThousandAgentsMs: number;
        /** Fresh instances measured (one in runs before the CPU floor over the whole tenant), and their CPU by thread kind. */
        runs?: number;
        threads?: ThreadCpu | undefined;
      };
    };
    /**
     * The local stack over HTTP (its gateway writes the stream as it comes), and the peak resident
     * memory of its inventory sandboxes once it had streamed this tenant (absent in runs before it was measured).
     */
    http: { ms: number; firstByteMs: number; status: number; sandboxPeakRssMiB?: number };
    /** The answer's JSON and gzip sizes; what a client without gzip was sent, and how that ended. */
    bytes: { json: number; gzip: number; plainSent: number; plainOutcome: string };
    /** Parsing the pages, serializing and gzipping alone, over a sample of the pages in a warm process. */
    cpuFloor: { sampleAgents: number; perThousandAgentsMs: number };
    /**
     * The CPU floor over the whole tenant in fresh processes with the function's Node, heap flags and
     * core, interleaved with the function's fresh instances: gzip at every size, br where br is
     * measured (absent in runs before it was measured).
     */
    freshFloor?: { gzip: FreshFloorFigure; br?: FreshFloorFigure | undefined };
    fresh: {
      status: number;
      maxRssMiB: number;
      cpuMs: number;
      cpuPerThousandAgentsMs: number;
      firstByteMs: number;
      invokeMs: number;
      /** Fresh instances measured, and their CPU by thread kind (absent in runs before they were read). */
      runs?: number;
      threads?: ThreadCpu | undefined;
    };
  }[];
  observations: {
    minutes: number;
    samples: number;
    floorMs: number;
    /** The floor making the handler's own requests (bench/floors.ts sameRequestsFloor). */
    requestsFloorMs: number;
    requestsRatio: number;
    handlerMs: number;
    httpMs: number;
    handlerRatio: number;
    httpRatio: number;
    handlerStatus: number;
  }[];
  /** TENANT_FENCING=iam against off, on the same tenant (credentials cached) and on a tenant read for the first time (one AssumeRole). */
  fencing:
    | {
        agents: number;
        offMs: number;
        fencedMs: number;
        ratio: number;
        firstReadOffMs: number;
        firstReadFencedMs: number;
        firstReadRatio: number;
        stsCalls: number;
      }
    | undefined;
  /** The inventory for a token with the endpoint scope claim next to one without, on the largest tenant (bench/scoped-inventory.ts). */
  scopedInventory?:
    | {
        agents: number;
        groups: string[];
        unscoped: { listed: number; ms: number; status: number; maxRssMiB: number; cpuMs: number };
        scoped: { listed: number; ms: number; status: number; maxRssMiB: number; cpuMs: number };
      }
    | undefined;
  /** The deployed bundles, the bare-SDK floor, and MCP_RUNTIME_SDK (not deployed). */
  bundles: { name: string; bytes: number }[];
  /**
   * `importMs`: the instance's init (Node, the runtime client, the import), in runs before the sandbox the import alone;
   * `ratio` to the bare-SDK bundle; `cpuMs`: the instance's CPU to its first answer (absent in runs before it was read).
   */
  coldStart: {
    name: string;
    ms: number;
    importMs: number;
    ratio: number;
    cpuMs?: number;
    /** The same cold start with an invocation X-Ray samples (the traced functions; absent in runs before it was measured): `ratio` to the bare SDK's. */
    sampled?: { ms: number; importMs: number; ratio: number; cpuMs: number };
  }[];
  /** A CPU profile of a fresh inventory instance listing the largest tenant (bench/inventory-profile.ts; absent before). */
  inventoryProfile?: ProfileFigure | undefined;
  /** The MCP App views beside the MCP bundle (never imported by it), and the MCP zip that carries them (absent in runs before the views). */
  views?: { file: string; bytes: number; gzipBytes: number; mcpZipBytes: number }[] | undefined;
  /** Whole-buffer compressions of a realistic tenant's inventory (`cpuMs` absent in runs before it was measured). */
  gzipLevels: { level: number; agents: number; bytes: number; ms: number; cpuMs?: number }[];
  /** The same for brotli's qualities (absent before br). */
  brotliQualities?: { quality: number; agents: number; bytes: number; ms: number; cpuMs: number }[];
  /** The brotli quality the service uses (absent before br). */
  brotliQuality?: number;
  /** Per tenant, through the writer of `npm run seed` (the engine in its own process). */
  seeding: { agents: number; items: number; seconds: number }[];
  targets: Target[];
  /** Results before the inventory had heap flags of its own: the fresh process's heap was capped within this memory. */
  freshHeapCapMb?: number;
  /** The V8 heap flags the fresh inventory processes and the CPU floor ran with: the inventory function's own (infra/inventory-heap.ts). */
  freshHeapFlags?: string;
  /** The young-generation flag the bench process and the local stack ran with (absent in runs before it was set). */
  youngGeneration?: string;
  /** The inventory function's memory and timeout, from the largest tenant (bench/targets.ts sizing). */
  sizing:
    | {
        basis: string;
        cpuSeconds: number;
        maxRssMiB: number;
        wireSeconds: number;
        memoryMb: number;
        cpuSecondsAtMemory: number;
        limitAgents: { plain: number; gzip: number };
        limitCpuSeconds: number;
        timeoutSeconds: number;
      }
    | undefined;
  durationSeconds: number;
}

/** The MCP door built with the AWS SDK left to the Lambda runtime: measured beside the deployed bundles, never deployed. */
export const MCP_RUNTIME_SDK = 'mcp-runtime-sdk';
/** The MCP door's cold-start floor: the MCP SDK's own handler with one tool making one Query (bench/bare-mcp-handler.ts). */
export const BARE_MCP = 'bare-mcp';
/** Every bundle the bench sizes and cold-starts, in the order of its table: the deployed ones, MCP_RUNTIME_SDK, the floors. */
export const BENCH_BUNDLES = ['inventory', 'observations', 'mcp', MCP_RUNTIME_SDK, BARE_MCP, 'bare-sdk'] as const;
export type BenchBundle = (typeof BENCH_BUNDLES)[number];
/** The MCP doors among the bench's bundles: their cold start is held against the bare MCP SDK's. */
export const MCP_DOORS: readonly string[] = ['mcp', MCP_RUNTIME_SDK];
/** One tenant's inventory figures. */
export type InventoryFigure = BenchResults['inventory'][number];
/** A fresh instance's figures for one coding (gzip's carry its first byte and invocation time besides). */
export type FreshFigure = NonNullable<InventoryFigure['br']>['fresh'];

/**
 * The function's CPU per 1,000 agents against the CPU floor's over the whole tenant, for each coding
 * measured both ways (none in runs before that floor): computed here once, for the CPU target
 * (bench/targets.ts) and the floor's table alike.
 */
export function cpuAgainstFloor(i: InventoryFigure): { coding: 'gzip' | 'br'; fn: FreshFigure; floor: FreshFloorFigure; ratio: number }[] {
  const floor = i.freshFloor;
  if (!floor) return [];
  const pairs = [
    ['gzip', i.fresh, floor.gzip],
    ['br', i.br?.fresh, floor.br],
  ] as const;
  return pairs.flatMap(([coding, fn, fl]) =>
    fn && fl ? [{ coding, fn, floor: fl, ratio: fn.cpuPerThousandAgentsMs / fl.cpuPerThousandAgentsMs }] : [],
  );
}

/**
 * A cold start's ratio to the bare MCP SDK's, for an MCP door or the bare MCP SDK itself; undefined
 * for another bundle or a run without the bare MCP SDK. Computed here once, for the MCP door's target
 * (bench/targets.ts) and the bundles' table alike.
 */
export function mcpSdkRatio(r: Pick<BenchResults, 'coldStart'>, name: string, sampled = false): number | undefined {
  if (!MCP_DOORS.includes(name) && name !== BARE_MCP) return undefined;
  const cold = r.coldStart.find((c) => c.name === name);
  const bareMcp = r.coldStart.find((c) => c.name === BARE_MCP);
  const ms = sampled ? cold?.sampled?.ms : cold?.ms;
  return ms !== undefined && bareMcp ? ms / bareMcp.ms : undefined;
}

/**
 * A cold start with an invocation X-Ray samples, against the floor its target names: the bare MCP
 * SDK's for an MCP door (when measured), else the bare SDK's; undefined where none was sampled.
 * Computed here once, for the targets and the bundles' table alike.
 */
export function sampledRatio(r: Pick<BenchResults, 'coldStart'>, name: string): number | undefined {
  const sampled = r.coldStart.find((c) => c.name === name)?.sampled;
  return sampled ? (mcpSdkRatio(r, name, true) ?? sampled.ratio) : undefined;
}

const BUNDLE_LABELS: Readonly<Record<string, string>> = {
  'bare-sdk': 'bare SDK (floor)',
  [BARE_MCP]: "bare MCP SDK (the MCP door's floor)",
  [MCP_RUNTIME_SDK]: 'mcp, AWS SDK from the runtime (not deployed)',
};

const BEGIN = '<!-- bench:begin (written by npm run bench; edit bench/report.ts instead) -->';
const END = '<!-- bench:end -->';
const SUMMARY_BEGIN = '<!-- bench:summary:begin (written by npm run bench; edit bench/report.ts instead) -->';
const SUMMARY_END = '<!-- bench:summary:end -->';

const ms = (v: number): string => (v >= 100 ? n(v) : v.toFixed(1));
const x = (v: number): string => `${v.toFixed(2)}×`;
const kib = (bytes: number): string => `${n(bytes / 1024)} KiB`;
const mb = (bytes: number): string => `${(bytes / 1_000_000).toFixed(2)} MB`;

/**
 * The chart: inventory time against tenant size (log-log), the floor and the service (handler,
 * HTTP). Hand-written SVG, no dependency; readable without a browser's help (labels on points).
 */
export function chartSvg(r: BenchResults): string {
  const W = 880;
  const H = 440;
  const left = 80;
  const right = 270;
  const top = 50;
  const bottom = 60;
  const rows = r.inventory;
  const sizes = rows.map((i) => i.agents);
  const points = rows.map((i) => ({
    agents: i.agents,
    wireMs: i.wire.ms,
    handlerMs: i.handler.ms,
    httpMs: i.http.ms,
    firstByteMs: i.http.firstByteMs,
    handlerRatio: i.handler.ms / i.wire.ms,
    httpRatio: i.http.ms / i.wire.ms,
  }));
  const values = points.flatMap((i) => [i.wireMs, i.handlerMs, i.httpMs, Math.max(1, i.firstByteMs)]);
  const xMin = Math.log10(Math.min(...sizes) / 1.5);
  const xMax = Math.log10(Math.max(...sizes) * 1.5);
  const yMin = Math.floor(Math.log10(Math.min(...values) / 1.2));
  const yMax = Math.ceil(Math.log10(Math.max(...values) * 1.2));
  const px = (agents: number): number => left + ((Math.log10(agents) - xMin) / (xMax - xMin)) * (W - left - right);
  const py = (v: number): number => H - bottom - ((Math.log10(v) - yMin) / (yMax - yMin)) * (H - top - bottom);
  const series = [
    { name: 'wire floor: the Query pages as raw HTTP', key: 'wireMs', color: '#7f7f7f', dash: '6 4' },
    { name: 'handler: last byte (bundle in its sandbox)', key: 'handlerMs', color: '#1f77b4', dash: '' },
    { name: 'over HTTP: last byte (local stack)', key: 'httpMs', color: '#ff7f0e', dash: '' },
    { name: 'over HTTP: first byte', key: 'firstByteMs', color: '#2ca02c', dash: '2 3' },
  ] as const;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(
    `<text x="${left}" y="24" font-size="15" font-weight="bold">GET /api/agents, streamed: median time against tenant size (log-log)</text>`,
  );
  out.push(
    `<text x="${left}" y="40" fill="#555">${r.date.slice(0, 10)}, ${r.machine.cpus} cores, ${r.machine.node}; realistic tenants; gzip accepted; lower is better</text>`,
  );
  for (let e = yMin; e <= yMax; e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (Math.log10(v) > yMax) continue;
      const y = py(v);
      out.push(
        `<line x1="${left}" y1="${y.toFixed(1)}" x2="${W - right}" y2="${y.toFixed(1)}" stroke="${m === 1 ? '#cccccc' : '#eeeeee'}"/>`,
      );
      out.push(
        `<text x="${left - 8}" y="${(y + 4).toFixed(1)}" text-anchor="end" fill="#555">${v >= 1000 ? `${v / 1000} s` : `${v} ms`}</text>`,
      );
    }
  }
  for (const agents of sizes) {
    const xx = px(agents);
    out.push(`<line x1="${xx.toFixed(1)}" y1="${top}" x2="${xx.toFixed(1)}" y2="${H - bottom}" stroke="#eeeeee"/>`);
    out.push(`<text x="${xx.toFixed(1)}" y="${H - bottom + 18}" text-anchor="middle" fill="#555">${n(agents)}</text>`);
  }
  out.push(`<text x="${((left + W - right) / 2).toFixed(1)}" y="${H - 18}" text-anchor="middle">agents in the tenant</text>`);
  out.push(`<line x1="${left}" y1="${H - bottom}" x2="${W - right}" y2="${H - bottom}" stroke="#333"/>`);
  out.push(`<line x1="${left}" y1="${top}" x2="${left}" y2="${H - bottom}" stroke="#333"/>`);
  series.forEach((s, index) => {
    const line = points.map((row) => `${px(row.agents).toFixed(1)},${py(Math.max(1, row[s.key])).toFixed(1)}`);
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2" ${s.dash ? `stroke-dasharray="${s.dash}"` : ''} points="${line.join(' ')}"/>`,
    );
    for (const row of points) {
      out.push(`<circle cx="${px(row.agents).toFixed(1)}" cy="${py(Math.max(1, row[s.key])).toFixed(1)}" r="3.5" fill="${s.color}"/>`);
    }
    const ly = top + 10 + index * 38;
    out.push(
      `<line x1="${W - right + 14}" y1="${ly}" x2="${W - right + 38}" y2="${ly}" stroke="${s.color}" stroke-width="2" ${s.dash ? `stroke-dasharray="${s.dash}"` : ''}/>`,
    );
    const [first, second] = s.name.split(': ');
    out.push(`<text x="${W - right + 44}" y="${ly + 4}">${first}${second ? ':' : ''}</text>`);
    if (second) out.push(`<text x="${W - right + 44}" y="${ly + 18}" fill="#555">${second}</text>`);
  });
  points.forEach((row, index) => {
    const label = `${x(row.handlerRatio)} / ${x(row.httpRatio)}`;
    // The last point's label goes to its left, clear of the legend.
    const last = index === points.length - 1;
    out.push(
      `<text x="${(px(row.agents) + (last ? -8 : 8)).toFixed(1)}" y="${(py(row.handlerMs) + 18).toFixed(1)}" text-anchor="${last ? 'end' : 'start'}" fill="#1f77b4">${label}</text>`,
    );
  });
  out.push(`<text x="${W - right + 14}" y="${top + 168}" fill="#555">labels: handler / HTTP</text>`);
  out.push(`<text x="${W - right + 14}" y="${top + 184}" fill="#555">as ratios to the wire floor</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** The figures of docs/performance.md, from a full run. */
export function performanceSection(r: BenchResults): string {
  const lines: string[] = [];
  const mark = (met: boolean): string => (met ? 'met' : '**missed**');
  lines.push(BEGIN);
  lines.push('');
  lines.push(
    `\`npm run bench\` (not part of \`npm test\`; ${Math.round(r.durationSeconds / 60)} minutes here, most of it seeding and listing the 1,000,000-agent tenant; \`npm run bench -- --quick\` runs tenants of 10,000 and 30,000 in a few minutes into \`bench/results.quick.json\`) measures every figure against a floor doing the same work, timed in the same run on the same engine and data: medians of interleaved runs, since these machines are noisy. The engine (dynalite) runs in a process of its own, and each function in the local stack's sandboxes (a process per instance, as \`npm start\` runs them), as DynamoDB and API Gateway do not share the function's CPU${r.machine.cores?.startsWith('pinned') ? ": the engine, the stack (its gateway and Runtime APIs) and the bench's reader of each answer on one core, each function instance on the other, with the floors' readers and the in-process call (`bench/cores.ts`, `taskset`), as Lambda gives the function its vCPU while DynamoDB and API Gateway run elsewhere" : ''}. Tenants are realistic (\`local/generator.ts\`, the generator of \`npm run seed -- --generate\`: random UUID-like ids, varied hostnames, OS, versions and clients, millisecond timestamps, every connection state). One file per figure under \`bench/\`; raw figures: [bench/results.json](../bench/results.json).`,
  );
  lines.push('');
  lines.push(
    `Last full run: ${r.date.slice(0, 10)}, ${r.machine.cpus} cores (${r.machine.model})${r.machine.cores ? `, ${r.machine.cores.split(':')[0]}` : ''}; the functions on Node ${r.machine.functionNode ?? r.machine.node}, the bench itself on Node ${r.machine.node}.`,
  );
  lines.push('');
  lines.push('![GET /api/agents: time against tenant size, service against the wire floor](../bench/results.svg)');
  lines.push('');
  lines.push(
    "**Inventory** (`GET /api/agents`, streamed, `Accept-Encoding: gzip`). Wire floor: the tenant's `Query` pages fetched as raw HTTP one after another and discarded (no SDK, no item parse; the next page's key cut from the page's bytes). Read floor: the same, with each page also decoded and parsed as JSON after the next one was asked for, the least any reader of the items does; on these two cores that work alone slows the engine, which shares them. Handler: the deployed bundle in its local sandbox, as `npm start` runs it (a process of its own under the runtime client, invoked through the Lambda Runtime API, a warm instance), first and last byte" +
      (r.youngGeneration ? `, in a process with the function's young generation (\`${r.youngGeneration}\`), as the local stack` : '') +
      ". In-process: the same bundle called in a process on the function's core, its answer counted there (no Runtime API, no other process reading it): the handler's time over it is what the process boundary costs. HTTP: the local stack, whose gateway writes the stream to the socket as it comes (emulated authorizer included), the same sandboxes behind it. CPU per 1,000 agents: the fresh instance's (below), against the CPU floor over the whole tenant (below) and, in brackets, the floor of earlier runs, parsing a sample of 40 pages, serializing their items and gzipping the text in a warm process. Fresh process: one invocation of the bundle in a new instance of the sandbox (a cold Lambda), bytes dropped as they come" +
      (r.freshHeapFlags
        ? `, with the V8 heap flags the deployed function has (\`${r.freshHeapFlags}\`: serverless.yml's \`NODE_OPTIONS\`, and what Node takes only on its command line, set by the function once its first page is read): what the process holds is a few pages at a time, and the flags keep V8 from letting their garbage pile up before it collects (docs/decisions.md, "The inventory's heap").`
        : r.freshHeapCapMb
          ? `, its V8 heap capped within ${r.freshHeapCapMb} MB (old space 90%, semi-space 5%) as in a function of that memory.`
          : ', its V8 heap not capped (V8 then sizes the heap from the machine and collects lazily: peak RSS then follows the garbage not yet collected, not what is held).'),
  );
  lines.push('');
  lines.push(
    '| agents | pages | wire floor (first page) | read floor | handler: first / last byte | ratio | in-process: last byte (boundary) | HTTP: first / last byte | ratio | gzip / JSON | CPU per 1,000 agents: function / floor (warm sample) | fresh process: peak RSS |',
  );
  lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const i of r.inventory) {
    lines.push(
      `| ${n(i.agents)} | ${n(i.pages)} | ${ms(i.wire.ms)} ms (${ms(i.wire.firstPageMs)} ms) | ${i.readFloorMs === undefined ? '–' : `${ms(i.readFloorMs)} ms (${x(i.readFloorMs / i.wire.ms)})`} | ${ms(i.handler.firstByteMs)} / ${ms(i.handler.ms)} ms | ${x(i.handler.ms / i.wire.ms)} | ${i.inProcess ? `${ms(i.inProcess.ms)} ms (${x(i.handler.ms / i.inProcess.ms)})` : '–'} | ${ms(i.http.firstByteMs)} / ${ms(i.http.ms)} ms | ${x(i.http.ms / i.wire.ms)} | ${mb(i.bytes.gzip)} / ${mb(i.bytes.json)} | ${i.fresh.cpuPerThousandAgentsMs.toFixed(1)} / ${i.freshFloor ? `${i.freshFloor.gzip.cpuPerThousandAgentsMs.toFixed(1)} ms` : '–'} (${i.cpuFloor.perThousandAgentsMs.toFixed(1)} ms) | ${n(i.fresh.maxRssMiB)} MiB |`,
    );
  }
  lines.push('');
  const withFloor = r.inventory.filter((i) => i.freshFloor !== undefined);
  if (withFloor.length > 0) {
    lines.push(
      `**The function's CPU against a floor doing the same work** (fresh processes over the whole tenant, interleaved: in each round a fresh instance of the function, then the floor, for each coding). CPU floor (\`bench/cpu-floor.ts\`): the answer's three steps and nothing else, in a fresh process with the function's Node, its heap flags (\`${r.freshHeapFlags ?? '–'}\`) and its core: every \`Query\` page of the tenant's partition fetched as raw HTTP (no SDK, no signing) and parsed with \`JSON.parse\`; each agent's element made from its records, with the same fields as the service's summary and no check, and passed to \`JSON.stringify\`; the array's text through the service's own compressor (gzip 6, or brotli ${r.brotliQuality ?? 4} flushed after each page). Its answer is the function's, byte for byte where no agent changed state between the two (the bench stops when its JSON differs by more than 1%). The function does beyond it: the SDK (HTTP, signing, its reading of each page), the checks of every record, the stream, the Lambda runtime client and its bundle's import. CPU is the process's (user and system, every thread, from its start), by thread from \`/proc\`: the JavaScript thread, V8's helper threads (garbage collection off the main thread) and libuv's pool (the compressor).`,
    );
    lines.push('');
    lines.push(
      '| agents | coding | function: CPU per 1,000 agents | floor: CPU per 1,000 agents | ratio | function: main / GC helpers / compressor | floor: main / GC helpers / compressor | peak RSS: function / floor |',
    );
    lines.push('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    const threads = (t: ThreadCpu | undefined): string => (t ? `${n(t.mainMs)} / ${n(t.gcHelpersMs)} / ${n(t.poolMs)} ms` : '–');
    const runs = (count: number): string => `${count} run${count === 1 ? '' : 's'}`;
    for (const i of withFloor) {
      for (const { coding, fn, floor: fl, ratio } of cpuAgainstFloor(i)) {
        lines.push(
          `| ${n(i.agents)} | ${coding} | ${fn.cpuPerThousandAgentsMs.toFixed(1)} ms (${runs(fn.runs ?? 1)}) | ${fl.cpuPerThousandAgentsMs.toFixed(1)} ms (${runs(fl.runs)}) | ${x(ratio)} | ${threads(fn.threads)} | ${threads(fl.threads)} | ${n(fn.maxRssMiB)} / ${n(fl.maxRssMiB)} MiB |`,
        );
      }
    }
    lines.push('');
  }
  if (r.inventoryProfile) {
    const p = r.inventoryProfile;
    lines.push(
      `**Where the inventory's CPU goes** (\`node --cpu-prof\` in the sandbox, through the instance's \`NODE_OPTIONS\`, sampling every ${p.intervalUs} µs: a fresh instance listing the ${n(p.agents)}-agent tenant with ${p.coding}, ${n(p.samples)} samples). The instance used ${n(p.cpuMs)} ms of CPU: ${n(p.threads.mainMs)} ms on its JavaScript thread, ${n(p.threads.gcHelpersMs)} ms on V8's helper threads (garbage collection), ${n(p.threads.poolMs)} ms on libuv's pool (the compressor), ${n(p.threads.otherMs)} ms on others (the profiler's own among them). The profile samples the JavaScript thread only; its time by layer below is each layer's share of the busy samples times that thread's CPU (on one core, a sample also lands where the thread waited for the other threads of its process). V8 gives the time of \`JSON.parse\`, a builtin, to the native call before it, the page's UTF-8 decoding: the two are one line.`,
    );
    lines.push('');
    lines.push('| layer (JavaScript thread) | CPU | share |');
    lines.push('| --- | ---: | ---: |');
    for (const l of p.byLayer) lines.push(`| ${l.layer} | ${n(l.ms)} ms | ${(l.share * 100).toFixed(1)}% |`);
    lines.push('');
    lines.push('| function (self time) | source | layer | CPU |');
    lines.push('| --- | --- | --- | ---: |');
    for (const f of p.top)
      lines.push(`| \`${f.name || '(anonymous)'}\` | ${f.source ? `\`${f.source}\`` : '–'} | ${f.layer} | ${n(f.ms)} ms |`);
    lines.push('');
  }
  const withBr = r.inventory.filter((i) => i.br !== undefined);
  if (withBr.length > 0) {
    lines.push(
      `**br beside gzip** (\`Accept-Encoding: br\`, brotli quality ${r.brotliQuality ?? '–'}, flushed after each page; the same warm sandbox, interleaved with the runs above; the function's CPU from its fresh instances):`,
    );
    lines.push('');
    lines.push(
      '| agents | gzip | br | bytes | handler gzip / br: last byte | br: first byte | CPU per 1,000 agents gzip / br | ratio | fresh br: peak RSS |',
    );
    lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const i of withBr) {
      const br = i.br;
      if (!br) continue;
      lines.push(
        `| ${n(i.agents)} | ${mb(i.bytes.gzip)} | ${mb(br.bytes)} | ${x(br.bytes / i.bytes.gzip)} | ${ms(i.handler.ms)} / ${ms(br.ms)} ms | ${ms(br.firstByteMs)} ms | ${i.fresh.cpuPerThousandAgentsMs.toFixed(1)} / ${br.fresh.cpuPerThousandAgentsMs.toFixed(1)} ms | ${x(br.fresh.cpuPerThousandAgentsMs / i.fresh.cpuPerThousandAgentsMs)} | ${n(br.fresh.maxRssMiB)} MiB |`,
      );
    }
    lines.push('');
  }
  const held = r.inventory.filter((i) => i.http.sandboxPeakRssMiB !== undefined);
  if (held.length > 0) {
    lines.push(
      `Through the local stack, the inventory's sandboxes (warm instances, each tenant streamed several times) held at most ${held.map((i) => `${n(i.http.sandboxPeakRssMiB ?? 0)} MiB once ${n(i.agents)} agents were streamed`).join(', ')}: within the function's heap flags and far within its memorySize.`,
    );
    lines.push('');
  }
  const stopped = r.inventory.filter((i) => i.bytes.plainOutcome !== 'complete');
  lines.push(
    `A client without gzip gets the same array as plain JSON, about ${(at(r.inventory, -1).bytes.json / at(r.inventory, -1).bytes.gzip).toFixed(1)} times larger${stopped.length > 0 ? `; at ${stopped.map((i) => n(i.agents)).join(' and ')} agents that passes the 200 MB a streamed answer may carry, and the transfer breaks before the byte that would cross it (${mb(at(stopped).bytes.plainSent)} sent; never a shorter valid array)` : ''}.`,
  );
  lines.push('');
  lines.push(
    "**Observations** (`GET /api/mcp/endpoint`, one endpoint with a week of 1-minute samples, `limit` 100). Floor: a bare SDK `Query` of the sample partition over the window. Same-requests floor: the bare SDK making the handler's requests and nothing else, the policy and the agent's two records (one `BatchGetItem`) with the window's `Query`, then the audit item's conditional `PutItem`: two sequential round trips, as the handler must (the audit write before any data leaves, its outcome decided by the reads). Handler: the bundle with its whole chain (token verified against the JWKS, policy, agent and window read together, dashboard, audit write).",
  );
  lines.push('');
  lines.push('| window | samples | floor | same-requests floor | handler | ratio (same requests) | over HTTP | ratio |');
  lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const o of r.observations) {
    lines.push(
      `| ${n(o.minutes)} min | ${n(o.samples)} | ${ms(o.floorMs)} ms | ${ms(o.requestsFloorMs)} ms | ${ms(o.handlerMs)} ms | ${x(o.handlerRatio)} (${x(o.requestsRatio)}) | ${ms(o.httpMs)} ms | ${x(o.httpRatio)} |`,
    );
  }
  lines.push('');
  if (r.fencing) {
    const f = r.fencing;
    lines.push(
      `**Tenant fencing by IAM** (\`TENANT_FENCING=iam\`, on on AWS): the inventory handler with fenced credentials against the same handler without, interleaved. On a ${n(f.agents)}-agent tenant whose credentials are cached: ${ms(f.offMs)} ms against ${ms(f.fencedMs)} ms, **${x(f.ratio)}**. The first read of a tenant (one \`sts:AssumeRole\`, a new client and connection; an empty tenant, so the read itself is small): ${ms(f.firstReadOffMs)} ms against ${ms(f.firstReadFencedMs)} ms, ${x(f.firstReadRatio)} (${n(f.stsCalls)} AssumeRole calls for ${n(f.stsCalls)} tenants). STS here is a local stand-in that answers at once; on AWS add one STS round trip (typically tens of milliseconds) per tenant per warm instance per hour.`,
    );
    lines.push('');
  }
  if (r.scopedInventory) {
    const { agents, groups, unscoped: u, scoped: sc } = r.scopedInventory;
    lines.push(
      `**Endpoint scope** (a token with \`endpoint_groups: ${JSON.stringify(groups)}\` next to one without the claim, the ${n(agents)}-agent tenant): the handler reads the same Query pages and keeps only the scope's endpoints as each page arrives. Unscoped: ${n(u.listed)} endpoints listed in ${ms(u.ms)} ms, peak RSS ${n(u.maxRssMiB)} MiB in a fresh process; scoped: ${n(sc.listed)} listed in ${ms(sc.ms)} ms (**${x(sc.ms / u.ms)}**), peak RSS ${n(sc.maxRssMiB)} MiB.`,
    );
    lines.push('');
  }
  const bareMcp = r.coldStart.find((c) => c.name === BARE_MCP);
  const bareSdk = r.coldStart.find((c) => c.name === 'bare-sdk');
  lines.push(
    "**Bundles and cold start.** Cold start: from spawning a new instance of the local sandbox to its first answer (Node with the function's `NODE_OPTIONS`, the bundle's source map read only when a stack is first formatted, the runtime client and the import: its init, as Lambda's Init Duration; then one invocation against the engine), medians of interleaved fresh instances, with the instance's CPU to its answer. Floor: a bundle of the bare SDK doing one `Query`, built with the same esbuild options (its source map too) and run in the same sandbox. The MCP door's invocation is a `tools/call` of `list_endpoints` on a 25-agent tenant (the MCP server built, the tool's DynamoDB read, the answer), which does more than the floor's one `Query`" +
      (bareMcp
        ? "; its own floor is the bare MCP SDK: the SDK's handler (`createMcpHandler`, its defaults) with one tool making one `Query`, answering the same `tools/call` (`bench/bare-mcp-handler.ts`), built and run the same way in the MCP function's sandbox"
        : '') +
      ". Beside it, not deployed: the same door built with the AWS SDK left out of the bundle, loaded from `node_modules` as Lambda's runtime loads its own copy (its CommonJS build).",
  );
  lines.push('');
  const anySampled = r.coldStart.some((c) => c.sampled);
  if (anySampled) {
    lines.push(
      "The invocation of these cold starts is one X-Ray does not sample, as a direct invocation's trace header says (`Sampled=0`): the floors record no trace either. A traced function loads Powertools Tracer and the X-Ray SDK under it at its first invocation X-Ray samples (`lib/observability/tracer.ts`), so the last column is the same cold start with a sampled invocation (`Sampled=1`, as API Gateway passes on a request its sampling rule picks: by default the first of each second and 5% of the rest), against the floor the target names (the bare MCP SDK for the MCP door, else the bare SDK): what recording the trace adds.",
    );
    lines.push('');
  }
  lines.push(
    `| bundle | size | cold start | of which init | CPU | ratio to the bare SDK | ratio to the bare MCP SDK |${anySampled ? ' cold start, sampled by X-Ray |' : ''}`,
  );
  lines.push(`| --- | ---: | ---: | ---: | ---: | ---: | ---: |${anySampled ? ' ---: |' : ''}`);
  for (const b of r.bundles) {
    const c = r.coldStart.find((cs) => cs.name === b.name);
    const againstMcp = mcpSdkRatio(r, b.name);
    const againstFloor = sampledRatio(r, b.name);
    const sampled = c?.sampled && againstFloor !== undefined ? `${n(c.sampled.ms)} ms, ${x(againstFloor)}` : '–';
    lines.push(
      `| ${BUNDLE_LABELS[b.name] ?? b.name} | ${kib(b.bytes)} | ${c ? `${n(c.ms)} ms` : '–'} | ${c ? `${n(c.importMs)} ms` : '–'} | ${c?.cpuMs === undefined ? '–' : `${n(c.cpuMs)} ms`} | ${c ? x(c.ratio) : '–'} | ${againstMcp === undefined ? '–' : x(againstMcp)} |${anySampled ? ` ${sampled} |` : ''}`,
    );
  }
  lines.push('');
  if (bareMcp && bareSdk) {
    // Its ratio is the one the bundles' table shows: every cold start's `ratio` is to the bare SDK's.
    lines.push(
      `What the MCP SDK costs a cold start (the bare MCP SDK against the bare SDK, the same one \`Query\`): ${n(bareMcp.ms - bareSdk.ms)} ms more to the first answer (${x(bareMcp.ratio)}), ${n(bareMcp.importMs - bareSdk.importMs)} ms of it in the init${bareMcp.cpuMs !== undefined && bareSdk.cpuMs !== undefined ? `, ${n(bareMcp.cpuMs - bareSdk.cpuMs)} ms more CPU` : ''}.`,
    );
    lines.push('');
  }
  for (const v of r.views ?? []) {
    lines.push(
      `**MCP App view**: \`${v.file}\`, ${kib(v.bytes)} (${kib(v.gzipBytes)} gzipped), one HTML file beside the MCP bundle, read when a client first asks for the view and kept, never imported: the bundle's size and cold start above do not include it. The MCP zip, which carries both, is ${kib(v.mcpZipBytes)}.`,
    );
    lines.push('');
  }
  const brotli = r.brotliQualities ?? [];
  lines.push(
    `**Compression levels** (the ${n(r.gzipLevels[0]?.agents ?? 0)}-agent tenant's inventory compressed whole${r.machine.functionNode ? ", on the function's core and Node" : ''}; the service uses gzip level ${r.gzipLevel}${r.brotliQuality === undefined ? '' : ` and brotli quality ${r.brotliQuality}`}):`,
  );
  lines.push('');
  lines.push('| coding | size | time | CPU |');
  lines.push('| --- | ---: | ---: | ---: |');
  for (const g of r.gzipLevels)
    lines.push(`| gzip ${g.level} | ${mb(g.bytes)} | ${ms(g.ms)} ms | ${g.cpuMs === undefined ? '–' : `${ms(g.cpuMs)} ms`} |`);
  for (const b of brotli) lines.push(`| br ${b.quality} | ${mb(b.bytes)} | ${ms(b.ms)} ms | ${ms(b.cpuMs)} ms |`);
  lines.push('');
  if (r.sizing) {
    const z = r.sizing;
    lines.push(
      `**Limits and sizing.** A streamed answer may carry 200 MB: with the bytes per agent of the ${z.basis} tenant that is about **${n(z.limitAgents.plain)} agents** as plain JSON and **${n(z.limitAgents.gzip)} agents** with gzip. Lambda streams the first 6 MB at full speed, then at most 2 MB/s, so the ${z.basis} tenant's gzip answer spends about ${z.wireSeconds.toFixed(0)} s on Lambda's side of the wire whatever the function does. Lambda gives CPU in proportion to memory (one vCPU at 1,769 MB); the ${z.basis} tenant needed ${z.cpuSeconds.toFixed(1)} s of CPU and ${n(z.maxRssMiB)} MiB peak RSS in a fresh process. Memory: **${n(z.memoryMb)} MB**, the smallest size at which that CPU (${z.cpuSecondsAtMemory.toFixed(1)} s there) fits within the answer's time on the wire, but no more than one vCPU (the work runs on one JavaScript thread), with at least twice the peak RSS. Timeout: **${z.timeoutSeconds} s** (function and API Gateway integration): the longest streamed answer, 200 MB, takes 97 s on the wire, and the tenant that fills it about ${z.limitCpuSeconds.toFixed(0)} s of CPU at that memory; the longer of the two, plus half again, rounded up to a minute.`,
    );
    lines.push('');
  }
  if (r.seeding.length > 0) {
    lines.push(
      `**Seeding** through the writer of \`npm run seed -- --generate\` (BatchWriteItems of 25, 8 in flight, unprocessed items retried with backoff): ${r.seeding.map((s) => `${n(s.agents)} agents (${n(s.items)} items) in ${s.seconds.toFixed(1)} s`).join(', ')}.`,
    );
    lines.push('');
  }
  lines.push('**Targets** (ratios to the floors above):');
  lines.push('');
  lines.push('| what | target | measured | |');
  lines.push('| --- | --- | --- | --- |');
  for (const t of r.targets) lines.push(`| ${t.what} | ${t.target} | ${t.measured} | ${mark(t.met)} |`);
  lines.push('');
  lines.push(END);
  return lines.join('\n');
}

/**
 * The README's three lines on performance, from a full run: the largest tenant's inventory, a short
 * dashboard, the cold starts, and how many targets are met.
 */
export function performanceSummary(r: BenchResults): string {
  const largest = r.inventory.at(-1);
  const shortWindow = r.observations[0];
  // The deployed functions' cold starts: not the floor's, not the door built with the runtime's SDK.
  const cold = r.coldStart.filter((c) => !(c.name in BUNDLE_LABELS));
  const met = r.targets.filter((t) => t.met).length;
  const lines = [SUMMARY_BEGIN];
  if (largest) {
    lines.push(
      `A ${n(largest.agents)}-endpoint tenant streams as ${mb(largest.bytes.gzip)} of gzip JSON in ${(largest.http.ms / 1000).toFixed(0)} s through the local stack (${x(largest.http.ms / largest.wire.ms)} the time of reading its pages and nothing else), its first bytes after ${ms(largest.http.firstByteMs)} ms, in a process that peaks at ${n(largest.fresh.maxRssMiB)} MiB whatever the tenant's size.`,
    );
  }
  if (shortWindow) lines.push(`A dashboard over ${n(shortWindow.minutes)} minutes answers in ${ms(shortWindow.handlerMs)} ms.`);
  lines.push(
    `Cold starts: ${cold.map((c) => `${c.name} ${n(c.ms)} ms`).join(', ')}. ${met} of ${r.targets.length} targets met (${r.date.slice(0, 10)}, ${r.machine.cpus} cores); the figures, their floors, the sizing and the test times are in [docs/performance.md](docs/performance.md).`,
  );
  lines.push(SUMMARY_END);
  return lines.join('\n');
}

/** Replaces the text between `begin` and `end` (markers included) in `file` with `block`. */
function replaceBlock(file: string, begin: string, end: string, block: string): void {
  const text = readFileSync(file, 'utf8');
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file} has no ${begin} … ${end} block`);
  writeFileSync(file, `${text.slice(0, from)}${block}${text.slice(to + end.length)}`);
}

/** Writes bench/results(.quick).json and .svg, and for a full run docs/performance.md's figures and the README's summary. */
export function writeReport(r: BenchResults, options: { root: string; quick: boolean }): void {
  const suffix = options.quick ? '.quick' : '';
  writeFileSync(join(options.root, 'bench', `results${suffix}.json`), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(join(options.root, 'bench', `results${suffix}.svg`), chartSvg(r));
  if (options.quick) return;
  replaceBlock(join(options.root, 'docs', 'performance.md'), BEGIN, END, performanceSection(r));
  replaceBlock(join(options.root, 'README.md'), SUMMARY_BEGIN, SUMMARY_END, performanceSummary(r));
}
