import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corePlan, cpuList, onCpus } from '../../bench/cores.js';
import { floorFigure, medianThreads } from '../../bench/inventory.js';
import { BARE_MCP, type BenchResults, performanceSection } from '../../bench/report.js';
import { targets } from '../../bench/targets.js';
import { ROOT } from '../../infra/build.js';

/** The last full run's results as committed. */
const committed = (): BenchResults => JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as BenchResults;
/** The same run as a bench from before br and the in-process call would have written it: neither figure. */
function withoutBrOrInProcess(r: BenchResults): BenchResults {
  return { ...r, inventory: r.inventory.map(({ br: _br, inProcess: _inProcess, ...figures }) => figures) };
}
/** The same run as a bench from before the CPU floor over the whole tenant, the bare MCP SDK and the sampled cold starts would have written it. */
function withoutNewFloors(r: BenchResults): BenchResults {
  return {
    ...r,
    inventory: r.inventory.map(({ freshFloor: _floor, ...figures }) => figures),
    coldStart: r.coldStart.filter((c) => c.name !== BARE_MCP).map(({ sampled: _sampled, ...c }) => c),
    bundles: r.bundles.filter((b) => b.name !== BARE_MCP),
    inventoryProfile: undefined,
  };
}
const threads = { mainMs: 600, gcHelpersMs: 100, poolMs: 300, otherMs: 0 };
/**
 * The run with the new floors: each inventory row's function CPU at `fnRatio` times its floor over
 * the whole tenant (gzip and br), and the MCP door's cold start at `mcpRatio` times the bare MCP SDK's.
 */
function withNewFloors(r: BenchResults, fnRatio: number, mcpRatio: number): BenchResults {
  const base = withoutNewFloors(r);
  const floorOf = (perThousand: number, agents: number) => ({
    runs: 2,
    cpuMs: (perThousand * agents) / 1000,
    cpuPerThousandAgentsMs: perThousand,
    maxRssMiB: 170,
    jsonBytes: 1,
    bytes: 1,
    threads,
  });
  const mcp = base.coldStart.find((c) => c.name === 'mcp');
  const bareSdk = base.coldStart.find((c) => c.name === 'bare-sdk');
  if (!mcp || !bareSdk) throw new Error('the committed results hold no MCP or bare-SDK cold start');
  const bareMcpMs = mcp.ms / mcpRatio;
  return {
    ...base,
    inventory: base.inventory.map((i) => ({
      ...i,
      // A run that read the function's threads for gzip only: br's row shows a dash there.
      ...(i.br ? { br: { ...i.br, fresh: { ...i.br.fresh, threads: undefined } } } : {}),
      freshFloor: {
        gzip: floorOf(i.fresh.cpuPerThousandAgentsMs / fnRatio, i.agents),
        br: i.br ? floorOf(i.br.fresh.cpuPerThousandAgentsMs / fnRatio, i.agents) : undefined,
      },
    })),
    // Its ratio as the bench writes every cold start's: to the bare SDK's.
    coldStart: [
      ...base.coldStart,
      { name: BARE_MCP, ms: bareMcpMs, importMs: mcp.importMs / mcpRatio, ratio: bareMcpMs / bareSdk.ms, cpuMs: 300 },
    ],
    bundles: [...base.bundles, { name: BARE_MCP, bytes: 500_000 }],
  };
}

describe("Bench: the targets' table", () => {
  it('holds the inventory to 1.3x its floors at 100,000 and 1,000,000 agents, and every cold start to 1.5x the bare SDK, with no MCP bundle size target (a run from before the new floors)', () => {
    const rows = targets(withoutNewFloors(committed())).map((t) => `${t.what} | ${t.target}`);

    expect(rows).toEqual(
      expect.arrayContaining([
        'inventory handler in its sandbox, 100,000 agents: total time | <= 1.3x wire floor',
        'inventory handler in its sandbox, 1,000,000 agents: total time | <= 1.3x wire floor',
        'inventory function process CPU per 1,000 agents, 100,000 agents (fresh instance) | <= 1.3x CPU floor',
        'inventory function process CPU per 1,000 agents, 1,000,000 agents (fresh instance) | <= 1.3x CPU floor',
        "the stack's inventory sandboxes, peak RSS once 1,000,000 agents were streamed | <= 256 MB",
        'inventory cold start | <= 1.5x bare-SDK bundle',
        'observations cold start | <= 1.5x bare-SDK bundle',
        'mcp cold start | <= 1.5x bare-SDK bundle',
      ]),
    );
    expect(rows.filter((row) => row.includes('CPU per 1,000 agents, 300,000'))).toEqual([]);
    expect(rows.filter((row) => row.startsWith('mcp bundle'))).toEqual([]);
    expect(rows.filter((row) => /^(inventory|observations) bundle \| <= 400 KiB$/.test(row))).toHaveLength(2);
  });

  it("holds the function's CPU to 1.25x the CPU floor over the whole tenant, gzip and br, at 100,000 and 1,000,000 agents, and the MCP door's cold start to 1.25x the bare MCP SDK's", () => {
    const within = targets(withNewFloors(committed(), 1.2, 1.2));
    const over = targets(withNewFloors(committed(), 1.3, 1.3));
    const cpuRows = (list: typeof within) => list.filter((t) => t.what.startsWith('inventory function process CPU'));

    expect(cpuRows(within).map((t) => `${t.what} | ${t.target}`)).toEqual([
      'inventory function process CPU per 1,000 agents, 100,000 agents, gzip (fresh instance) | <= 1.25x the CPU floor over the whole tenant',
      'inventory function process CPU per 1,000 agents, 100,000 agents, br (fresh instance) | <= 1.25x the CPU floor over the whole tenant',
      'inventory function process CPU per 1,000 agents, 1,000,000 agents, gzip (fresh instance) | <= 1.25x the CPU floor over the whole tenant',
      'inventory function process CPU per 1,000 agents, 1,000,000 agents, br (fresh instance) | <= 1.25x the CPU floor over the whole tenant',
    ]);
    expect(cpuRows(within).every((t) => t.met && t.measured.endsWith('(1.20x)'))).toBe(true);
    expect(cpuRows(over).some((t) => t.met)).toBe(false);
    expect(within.find((t) => t.what === 'mcp cold start')).toMatchObject({
      target: '<= 1.25x bare MCP-SDK bundle',
      measured: '1.20x',
      met: true,
    });
    expect(over.find((t) => t.what === 'mcp cold start')?.met).toBe(false);
    expect(within.filter((t) => t.what.endsWith('cold start') && t.target === '<= 1.5x bare-SDK bundle').map((t) => t.what)).toEqual([
      'inventory cold start',
      'observations cold start',
    ]);
  });

  it("judges each cold start on an invocation X-Ray does not sample, as the floors trace nothing, and shows the sampled one beside it in the targets and the bundles' table", () => {
    const base = withNewFloors(committed(), 1.2, 1.2);
    const floorMs = (name: string): number => base.coldStart.find((c) => c.name === name)?.ms ?? Number.NaN;
    // A sampled cold start that loads the tracer: 1.4x the floor the target names, the unsampled one within.
    const r: BenchResults = {
      ...base,
      coldStart: base.coldStart.map((c) => {
        if (!['inventory', 'observations', 'mcp'].includes(c.name)) return c;
        const ms = 1.4 * floorMs(c.name === 'mcp' ? BARE_MCP : 'bare-sdk');
        return { ...c, sampled: { ms, importMs: c.importMs + 10, ratio: ms / floorMs('bare-sdk'), cpuMs: (c.cpuMs ?? 0) + 20 } };
      }),
    };
    const rows = targets(r).filter((t) => t.what.endsWith('cold start'));
    expect(rows.find((t) => t.what === 'mcp cold start')).toMatchObject({ measured: '1.20x (sampled by X-Ray: 1.40x)', met: true });
    for (const name of ['inventory', 'observations']) {
      const c = base.coldStart.find((x) => x.name === name);
      expect(rows.find((t) => t.what === `${name} cold start`)).toMatchObject({
        measured: `${c?.ratio.toFixed(2)}x (sampled by X-Ray: 1.40x)`,
        met: (c?.ratio ?? 2) <= 1.5,
      });
    }
    const text = performanceSection({ ...r, targets: targets(r) });
    expect(text).toContain('| ratio to the bare SDK | ratio to the bare MCP SDK | cold start, sampled by X-Ray |');
    expect(text).toMatch(/\| mcp \| [^\n]* \| 1\.20× \| [\d,]+ ms, 1\.40× \|\n/);
    expect(text).toMatch(/\| inventory \| [^\n]* \| – \| [\d,]+ ms, 1\.40× \|\n/);
    // The floors and the undeployed variant have no sampled figure.
    expect(text).toMatch(/\| bare SDK \(floor\) \| [^\n]* \| – \|\n/);
  });

  it('renders the CPU floor table, the cold starts against both floors with what the MCP SDK costs, and the profile by layer', () => {
    const r = withNewFloors(committed(), 1.2, 1.2);
    const text = performanceSection({
      ...r,
      targets: targets(r),
      inventoryProfile: {
        agents: 1_000_000,
        coding: 'gzip',
        cpuMs: 15_000,
        threads,
        intervalUs: 1000,
        samples: 60_000,
        byLayer: [{ layer: 'page parse (UTF-8, JSON.parse)', ms: 5000, share: 0.5 }],
        top: [{ name: 'utf8Slice', source: '', layer: 'page parse (UTF-8, JSON.parse)', ms: 5000 }],
      },
    });

    expect(text).toContain("**The function's CPU against a floor doing the same work**");
    // The function's threads for br were not read in that run (a dash); the floor's were, and gzip's of both.
    expect(text).toMatch(/\| 1,000,000 \| br \| [\d.]+ ms \(\d+ runs?\) \| [\d.]+ ms \(2 runs\) \| 1\.20× \| – \| 600 \/ 100 \/ 300 ms \|/);
    expect(text).toMatch(
      /\| 1,000,000 \| gzip \| [\d.]+ ms \(\d+ runs?\) \| [\d.]+ ms \(2 runs\) \| 1\.20× \| [\d,]+ \/ [\d,]+ \/ [\d,]+ ms \| 600 \/ 100 \/ 300 ms \|/,
    );
    expect(text).toContain("| bare MCP SDK (the MCP door's floor) | 488 KiB |");
    expect(text).toMatch(/\| mcp \| [^\n]* \| 1\.20× \|\n/);
    expect(text).toContain('What the MCP SDK costs a cold start');
    const bareMcp = r.coldStart.find((c) => c.name === BARE_MCP);
    const bareSdk = r.coldStart.find((c) => c.name === 'bare-sdk');
    if (!bareMcp || bareSdk?.cpuMs === undefined) throw new Error('the fixture holds no bare MCP SDK, or no bare SDK with its CPU');
    const whole = (v: number) => Math.round(v).toLocaleString('en');
    const againstSdk = `${(bareMcp.ms / bareSdk.ms).toFixed(2)}×`;
    expect(text).toContain(
      `What the MCP SDK costs a cold start (the bare MCP SDK against the bare SDK, the same one \`Query\`): ${whole(bareMcp.ms - bareSdk.ms)} ms more to the first answer (${againstSdk}), ${whole(bareMcp.importMs - bareSdk.importMs)} ms of it in the init, ${whole(300 - bareSdk.cpuMs)} ms more CPU.`,
    );
    // The bundles' table shows the same ratio to the bare SDK, and the bare MCP SDK at 1.00× itself.
    expect(text).toMatch(
      new RegExp(
        `\\| bare MCP SDK \\(the MCP door's floor\\) \\| 488 KiB \\| [^\\n]* \\| ${againstSdk.replace('.', '\\.')} \\| 1\\.00× \\|\\n`,
      ),
    );
    expect(text).toContain('| page parse (UTF-8, JSON.parse) | 5,000 ms | 50.0% |');
  });

  it('judges br against gzip where it was measured: fewer bytes for at most 1.05x the CPU', () => {
    const r = committed();
    const largest = r.inventory.at(-1);
    if (!largest) throw new Error('the committed results hold no inventory figure');
    const withBr = (bytes: number, cpu: number): BenchResults => ({
      ...r,
      inventory: [
        {
          ...largest,
          br: { ms: 1, firstByteMs: 1, status: 200, bytes, fresh: { status: 200, maxRssMiB: 1, cpuMs: 1, cpuPerThousandAgentsMs: cpu } },
        },
      ],
    });
    const gzipCpu = largest.fresh.cpuPerThousandAgentsMs;
    const row = (results: BenchResults) => targets(results).find((t) => t.what.startsWith('inventory with br'));

    expect(row(withBr(largest.bytes.gzip * 0.9, gzipCpu * 1.04))).toMatchObject({ target: "fewer bytes, CPU <= 1.05x gzip's", met: true });
    expect(row(withBr(largest.bytes.gzip * 0.9, gzipCpu * 1.1))?.met).toBe(false);
    expect(row(withBr(largest.bytes.gzip * 1.01, gzipCpu))?.met).toBe(false);
    expect(row(withoutBrOrInProcess(r))).toBeUndefined();
  });

  it('renders a run from before the in-process call and br without them, marking the missing column', () => {
    const old = withoutBrOrInProcess(committed());
    const text = performanceSection({ ...old, targets: targets(old) });

    expect(text).toContain('in-process: last byte (boundary)');
    const largest = old.inventory.at(-1);
    // The row of the largest tenant: its agents and pages, then a dash where the in-process figure would be.
    expect(text).toMatch(new RegExp(`\\| ${largest?.agents.toLocaleString('en-US')} \\| ${largest?.pages} \\| [^\\n]* \\| – \\| `));
    expect(text).not.toContain('**br beside gzip**');
    expect(text).not.toContain('mcp bundle');
  });
});

describe("Bench: the floor's runs and threads as medians", () => {
  it('takes the median of each figure, per 1,000 agents for the CPU, and of each thread kind over the runs that read theirs', () => {
    const run = (cpuMs: number, mainMs: number) => ({
      agents: 1000,
      pages: 1,
      jsonBytes: 10,
      bytes: 2,
      ms: 1,
      cpuMs,
      maxRssMiB: cpuMs / 10,
      threads: { mainMs, gcHelpersMs: 1, poolMs: 2, otherMs: 0 },
    });

    expect(floorFigure([run(100, 50), run(300, 70), run(200, 60)], 2000)).toMatchObject({
      runs: 3,
      cpuMs: 200,
      cpuPerThousandAgentsMs: 100,
      maxRssMiB: 20,
      threads: { mainMs: 60, gcHelpersMs: 1, poolMs: 2, otherMs: 0 },
    });
    expect(medianThreads([undefined, { mainMs: 4, gcHelpersMs: 2, poolMs: 0, otherMs: 0 }])).toEqual({
      mainMs: 4,
      gcHelpersMs: 2,
      poolMs: 0,
      otherMs: 0,
    });
    expect(medianThreads([undefined])).toBeUndefined();
  });
});

describe('Bench: the cores (bench/cores.ts)', () => {
  it('reads a CPU list as taskset writes it', () => {
    expect(cpuList('0-1')).toEqual([0, 1]);
    expect(cpuList('0,2-4,7\n')).toEqual([0, 2, 3, 4, 7]);
    expect(cpuList('')).toEqual([]);
  });

  it("puts AWS's side on the first allowed CPU and the function on the second", () => {
    const plan = corePlan([2, 5, 6], true);

    expect(plan).toMatchObject({ service: '2', function: '5' });
    expect(plan.description).toMatch(/^pinned: /);
    expect(onCpus(plan.function, '/node', ['a.mjs'])).toEqual({ file: 'taskset', args: ['-c', '5', '/node', 'a.mjs'] });
  });

  it('runs unpinned, saying why, on one CPU or without taskset', () => {
    expect(corePlan([0], true)).toEqual({
      service: undefined,
      function: undefined,
      description: 'unpinned: 1 CPU allowed here: the function shares its core with the engine and the stack',
    });
    expect(corePlan([0, 1], false).description).toBe(
      'unpinned: taskset (util-linux) is not on this machine, so every process shares every core',
    );
    expect(onCpus(undefined, '/node', ['a.mjs'])).toEqual({ file: '/node', args: ['a.mjs'] });
  });
});
