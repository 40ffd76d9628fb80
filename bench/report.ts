import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { n } from './stats.js';

export interface Target {
  what: string;
  target: string;
  measured: string;
  met: boolean;
}

export interface BenchResults {
  date: string;
  mode: 'full' | 'quick';
  machine: { cpus: number; model: string; node: string };
  gzipLevel: number;
  inventory: {
    agents: number;
    runs: number;
    floorMs: number;
    handlerMs: number;
    httpMs: number;
    handlerRatio: number;
    httpRatio: number;
    handlerStatus: number;
    httpStatus: number;
    bytes: { json: number; gzip: number; lambda: number };
    fresh: { status: number; maxRssMiB: number; cpuMs: number; invokeMs: number };
  }[];
  observations: {
    minutes: number;
    samples: number;
    floorMs: number;
    handlerMs: number;
    httpMs: number;
    handlerRatio: number;
    httpRatio: number;
    handlerStatus: number;
  }[];
  /** TENANT_FENCING=iam against off, on the same tenant (credentials cached) and on a tenant read for the first time (one AssumeRole). */
  fencing:
    | { agents: number; offMs: number; fencedMs: number; ratio: number; firstReadOffMs: number; firstReadFencedMs: number; firstReadRatio: number; stsCalls: number }
    | undefined;
  bundles: { name: string; bytes: number }[];
  coldStart: { name: string; ms: number; importMs: number; ratio: number }[];
  gzipLevels: { level: number; agents: number; bytes: number; ms: number }[];
  largestTenant:
    | {
        agents: number;
        level: number;
        offlineBytes: number;
        handlerStatus: number;
        handlerBytes: number;
        fresh: { maxRssMiB: number; cpuMs: number; invokeMs: number; status: number };
      }
    | undefined;
  /** Per tenant, through the writer of `npm run seed` (the engine in its own process). */
  seeding: { agents: number; items: number; seconds: number }[];
  targets: Target[];
  memory:
    | { mb: number; basis: string; cpuSeconds: number; maxRssMiB: number; secondsAt512: number; secondsAtRecommended: number }
    | undefined;
  durationSeconds: number;
}

const BEGIN = '<!-- bench:begin (written by npm run bench; edit bench/report.ts instead) -->';
const END = '<!-- bench:end -->';

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
  const values = rows.flatMap((i) => [i.floorMs, i.handlerMs, i.httpMs]);
  const xMin = Math.log10(Math.min(...sizes) / 1.5);
  const xMax = Math.log10(Math.max(...sizes) * 1.5);
  const yMin = Math.floor(Math.log10(Math.min(...values) / 1.2));
  const yMax = Math.ceil(Math.log10(Math.max(...values) * 1.2));
  const px = (agents: number): number => left + ((Math.log10(agents) - xMin) / (xMax - xMin)) * (W - left - right);
  const py = (v: number): number => H - bottom - ((Math.log10(v) - yMin) / (yMax - yMin)) * (H - top - bottom);
  const series = [
    { name: 'floor: SDK Query loop + JSON.stringify', key: 'floorMs', color: '#7f7f7f', dash: '6 4' },
    { name: 'handler (bundle, called directly)', key: 'handlerMs', color: '#1f77b4', dash: '' },
    { name: 'over HTTP (local stack)', key: 'httpMs', color: '#ff7f0e', dash: '' },
  ] as const;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${left}" y="24" font-size="15" font-weight="bold">GET /api/agents: median time against tenant size (log-log)</text>`);
  out.push(`<text x="${left}" y="40" fill="#555">${r.date.slice(0, 10)}, ${r.machine.cpus} cores, ${r.machine.node}; realistic tenants; gzip accepted; lower is better</text>`);
  for (let e = yMin; e <= yMax; e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (Math.log10(v) > yMax) continue;
      const y = py(v);
      out.push(`<line x1="${left}" y1="${y.toFixed(1)}" x2="${W - right}" y2="${y.toFixed(1)}" stroke="${m === 1 ? '#cccccc' : '#eeeeee'}"/>`);
      out.push(`<text x="${left - 8}" y="${(y + 4).toFixed(1)}" text-anchor="end" fill="#555">${v >= 1000 ? `${v / 1000} s` : `${v} ms`}</text>`);
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
    const points = rows.map((row) => `${px(row.agents).toFixed(1)},${py(row[s.key]).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" ${s.dash ? `stroke-dasharray="${s.dash}"` : ''} points="${points.join(' ')}"/>`);
    for (const row of rows) {
      out.push(`<circle cx="${px(row.agents).toFixed(1)}" cy="${py(row[s.key]).toFixed(1)}" r="3.5" fill="${s.color}"/>`);
    }
    const ly = top + 10 + index * 38;
    out.push(`<line x1="${W - right + 14}" y1="${ly}" x2="${W - right + 38}" y2="${ly}" stroke="${s.color}" stroke-width="2" ${s.dash ? `stroke-dasharray="${s.dash}"` : ''}/>`);
    const [first, second] = s.name.split(': ');
    out.push(`<text x="${W - right + 44}" y="${ly + 4}">${first}${second ? ':' : ''}</text>`);
    if (second) out.push(`<text x="${W - right + 44}" y="${ly + 18}" fill="#555">${second}</text>`);
  });
  rows.forEach((row, index) => {
    const label = `${x(row.handlerRatio)} / ${x(row.httpRatio)}${row.handlerStatus !== 200 ? ` (answer ${row.handlerStatus})` : ''}`;
    // The last point's label goes to its left, clear of the legend.
    const last = index === rows.length - 1;
    out.push(
      `<text x="${(px(row.agents) + (last ? -8 : 8)).toFixed(1)}" y="${(py(row.handlerMs) + 18).toFixed(1)}" text-anchor="${last ? 'end' : 'start'}" fill="#1f77b4">${label}</text>`,
    );
  });
  out.push(`<text x="${W - right + 14}" y="${top + 130}" fill="#555">labels: handler / HTTP</text>`);
  out.push(`<text x="${W - right + 14}" y="${top + 146}" fill="#555">as ratios to the floor</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** The README's "Performance" section, from a full run. */
export function performanceSection(r: BenchResults): string {
  const lines: string[] = [];
  const mark = (met: boolean): string => (met ? 'met' : '**missed**');
  lines.push(BEGIN);
  lines.push('');
  lines.push(
    `\`npm run bench\` (not part of \`npm test\`; ${Math.round(r.durationSeconds / 60)} minutes here; \`npm run bench -- --quick\` runs a subset in under a minute into \`bench/results.quick.json\`) measures every figure against a floor doing the same I/O, timed in the same run on the same engine and data: medians of interleaved runs, since these machines are noisy. The engine (dynalite) and the local stack run in processes of their own, as DynamoDB and API Gateway do not share the function's CPU. Tenants are realistic (\`infra/local/generator.ts\`, the generator of \`npm run seed -- --generate\`: random UUID-like ids, varied hostnames, OS, versions and clients, millisecond timestamps, every connection state). Raw figures: [bench/results.json](bench/results.json).`,
  );
  lines.push('');
  lines.push(`Last full run: ${r.date.slice(0, 10)}, ${r.machine.cpus} cores (${r.machine.model}), Node ${r.machine.node}.`);
  lines.push('');
  lines.push('![GET /api/agents: time against tenant size, service against floor](bench/results.svg)');
  lines.push('');
  lines.push('**Inventory** (`GET /api/agents`, `Accept-Encoding: gzip`). Floor: a bare SDK `Query` loop following `LastEvaluatedKey`, then `JSON.stringify` of the items. Handler: the deployed bundle called as Lambda calls it. HTTP: the local stack (the token authorizer included). Fresh process: one invocation of the bundle in a new `node` (as a cold Lambda), the response serialized as the runtime does.');
  lines.push('');
  lines.push('| agents | floor | handler | ratio | over HTTP | ratio | answer | JSON / gzip / as Lambda returns it | fresh process: peak RSS, CPU |');
  lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |');
  for (const i of r.inventory) {
    lines.push(
      `| ${n(i.agents)} | ${ms(i.floorMs)} ms | ${ms(i.handlerMs)} ms | ${x(i.handlerRatio)} | ${ms(i.httpMs)} ms | ${x(i.httpRatio)} | ${i.handlerStatus} | ${mb(i.bytes.json)} / ${mb(i.bytes.gzip)} / ${mb(i.bytes.lambda)} | ${n(i.fresh.maxRssMiB)} MiB, ${n(i.fresh.cpuMs)} ms |`,
    );
  }
  lines.push('');
  lines.push('**Observations** (`GET /api/mcp/endpoint`, one endpoint with a week of 1-minute samples, `limit` 100). Floor: a bare SDK `Query` of the sample partition over the window. Handler: the bundle with its whole chain (token verified against the JWKS, policy, agent and window read together, dashboard, audit write).');
  lines.push('');
  lines.push('| window | samples | floor | handler | ratio | over HTTP | ratio |');
  lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const o of r.observations) {
    lines.push(`| ${n(o.minutes)} min | ${n(o.samples)} | ${ms(o.floorMs)} ms | ${ms(o.handlerMs)} ms | ${x(o.handlerRatio)} | ${ms(o.httpMs)} ms | ${x(o.httpRatio)} |`);
  }
  lines.push('');
  if (r.fencing) {
    const f = r.fencing;
    lines.push(
      `**Tenant fencing by IAM** (\`TENANT_FENCING=iam\`, on on AWS): the inventory handler with fenced credentials against the same handler without, interleaved. On a ${n(f.agents)}-agent tenant whose credentials are cached: ${ms(f.offMs)} ms against ${ms(f.fencedMs)} ms, **${x(f.ratio)}**. The first read of a tenant (one \`sts:AssumeRole\`, a new client and connection; an empty tenant, so the read itself is small): ${ms(f.firstReadOffMs)} ms against ${ms(f.firstReadFencedMs)} ms, ${x(f.firstReadRatio)} (${n(f.stsCalls)} AssumeRole calls for ${n(f.stsCalls)} tenants). STS here is a local stand-in that answers at once; on AWS add one STS round trip (typically tens of milliseconds) per tenant per warm instance per hour.`,
    );
    lines.push('');
  }
  lines.push('**Bundles and cold start.** Cold start: from spawning `node` to the first answer (import, initialisation, one invocation against the engine), medians of interleaved fresh processes. Floor: a bundle of the bare SDK doing one `Query`, built with the same esbuild options.');
  lines.push('');
  lines.push('| bundle | size | cold start | of which import | ratio |');
  lines.push('| --- | ---: | ---: | ---: | ---: |');
  for (const b of r.bundles) {
    const c = r.coldStart.find((cs) => cs.name === b.name);
    lines.push(`| ${b.name === 'bare-sdk' ? 'bare SDK (floor)' : b.name} | ${kib(b.bytes)} | ${c ? `${n(c.ms)} ms` : '–'} | ${c ? `${n(c.importMs)} ms` : '–'} | ${c ? x(c.ratio) : '–'} |`);
  }
  lines.push('');
  lines.push(`**gzip level** (the ${n(r.gzipLevels[0]?.agents ?? 0)}-agent tenant's inventory; the service uses level ${r.gzipLevel}):`);
  lines.push('');
  lines.push('| level | gzip | time |');
  lines.push('| ---: | ---: | ---: |');
  for (const g of r.gzipLevels) lines.push(`| ${g.level} | ${mb(g.bytes)} | ${ms(g.ms)} ms |`);
  lines.push('');
  if (r.largestTenant) {
    const t = r.largestTenant;
    lines.push(
      `**The largest tenant.** Lambda returns at most 6,291,456 bytes, counted on the whole serialized response (the gzip as base64 inside the JSON envelope). The largest realistic tenant that fits is **${n(t.agents)} agents** (gzip level ${t.level}; found with the service's own serialization, then seeded and listed through the handler: ${t.handlerStatus}, ${n(t.handlerBytes)} bytes as Lambda measures it; in a fresh process ${n(t.fresh.maxRssMiB)} MiB peak RSS and ${n(t.fresh.cpuMs)} ms CPU). The exact number moves by a few hundred with the data (hostnames, how many agents are connected at the time); every larger inventory is a \`507\` that gives its size and says to ask the operator, never AWS's bare error, and a client without gzip gets a \`406\` as soon as only the compressed list would fit.`,
    );
    lines.push('');
  }
  if (r.memory) {
    const m = r.memory;
    lines.push(
      `**Memory size.** Lambda gives a function CPU in proportion to its memory (one vCPU at 1,769 MB). For ${m.basis} the inventory needs ${(m.cpuSeconds).toFixed(1)} s of CPU and ${n(m.maxRssMiB)} MiB: about ${m.secondsAt512.toFixed(1)} s of CPU time at 512 MB, ${m.secondsAtRecommended.toFixed(1)} s at ${n(m.mb)} MB. Recommended: **${n(m.mb)} MB**: its CPU within a quarter of the 15 s timeout (the rest is for DynamoDB's pages, Graviton cores slower than this machine's and garbage collection), its peak RSS under half the memory. At 512 MB the largest tenants would run close to the timeout.`,
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

/** Writes bench/results(.quick).json and .svg, and for a full run the README's Performance section. */
export function writeReport(r: BenchResults, options: { root: string; quick: boolean }): void {
  const suffix = options.quick ? '.quick' : '';
  writeFileSync(join(options.root, 'bench', `results${suffix}.json`), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(join(options.root, 'bench', `results${suffix}.svg`), chartSvg(r));
  if (options.quick) return;
  const readmePath = join(options.root, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const section = performanceSection(r);
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`README.md has no ${BEGIN} … ${END} block in its Performance section`);
  writeFileSync(readmePath, `${readme.slice(0, begin)}${section}${readme.slice(end + END.length)}`);
}
