import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corePlan, cpuList, onCpus } from '../../bench/cores.js';
import { type BenchResults, performanceSection } from '../../bench/report.js';
import { targets } from '../../bench/targets.js';
import { ROOT } from '../../infra/build.js';

/** The last full run's results as committed. */
const committed = (): BenchResults => JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as BenchResults;
/** The same run as a bench from before br and the in-process call would have written it: neither figure. */
function withoutBrOrInProcess(r: BenchResults): BenchResults {
  return { ...r, inventory: r.inventory.map(({ br: _br, inProcess: _inProcess, ...figures }) => figures) };
}

describe("Bench: the targets' table", () => {
  it('holds the inventory to 1.3x its floors at 100,000 and 1,000,000 agents, and every cold start to 1.5x the bare SDK, with no MCP bundle size target', () => {
    const rows = targets(committed()).map((t) => `${t.what} | ${t.target}`);

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
