/**
 * `npm run bench`: what the service costs, each figure against a floor doing the same work,
 * measured in the same run on the same engine and the same data, as medians of interleaved runs
 * (these machines are noisy). One file per figure; this table runs them in order.
 *
 * The full run seeds realistic tenants of 100,000, 300,000 and 1,000,000 agents (about 1.9
 * million items for the largest) and lists each several times: about an hour on two cores.
 * `npm run bench -- --quick` (tenants of 10,000 and 30,000, fewer runs) takes a few minutes and
 * writes bench/results.quick.json and .svg only; the full run also writes docs/performance.md and the README's summary.
 * Exits 1 when a target is missed.
 */
import { ROOT } from '../infra/build.js';
import { writeTenantAgents } from '../local/fleet.js';
import { realisticAgents } from '../local/generator.js';
import { coldStartFigure } from './cold-start.js';
import { compressionFigure } from './compression.js';
import { type BenchContext, benchContext } from './context.js';
import { fencingFigure } from './fencing.js';
import { inventoryFigure, seedInventoryTenants } from './inventory.js';
import { inventoryProfileFigure } from './inventory-profile.js';
import { observationsFigure, seedObservedEndpoint } from './observations.js';
import { writeReport } from './report.js';
import { scopedInventoryFigure } from './scoped-inventory.js';
import { sizing, targets } from './targets.js';

const quick = process.argv.includes('--quick');

/** Shared between figures: the observed endpoint's id, once seeded. */
const state = { observedAgentId: '' };

const FIGURES: { name: string; run: (ctx: BenchContext) => Promise<void> | void }[] = [
  { name: 'seeding', run: seedInventoryTenants },
  { name: 'inventory', run: inventoryFigure },
  { name: 'inventory profile', run: inventoryProfileFigure },
  { name: 'scoped inventory', run: scopedInventoryFigure },
  {
    name: 'tenant fencing',
    run: async (ctx) => {
      await writeTenantAgents(
        ctx.db,
        { dataTable: ctx.dataTable },
        'bench-fencing',
        realisticAgents('bench-fencing', 1_000, { now: ctx.now }),
        8,
      );
      await fencingFigure(ctx, 'bench-fencing', 1_000);
    },
  },
  {
    name: 'observations',
    run: async (ctx) => {
      state.observedAgentId = await seedObservedEndpoint(ctx);
      await observationsFigure(ctx, state.observedAgentId);
    },
  },
  { name: 'cold start', run: (ctx) => coldStartFigure(ctx, state.observedAgentId) },
  { name: 'compression levels', run: compressionFigure },
];

async function main(): Promise<number> {
  const started = performance.now();
  const ctx = await benchContext(quick);
  try {
    for (const figure of FIGURES) await figure.run(ctx);
    const r = ctx.results;
    r.targets = targets(r);
    r.sizing = sizing(r);
    r.durationSeconds = (performance.now() - started) / 1000;
    writeReport(r, { root: ROOT, quick });
    for (const t of r.targets) ctx.say(`${t.met ? 'ok  ' : 'MISS'} ${t.what}: ${t.measured} (target ${t.target})`);
    ctx.say(
      `done in ${(r.durationSeconds / 60).toFixed(1)} min; wrote bench/results${quick ? '.quick' : ''}.json${quick ? '' : ', bench/results.svg, docs/performance.md and README.md (summary)'}`,
    );
    return r.targets.every((t) => t.met) ? 0 : 1;
  } finally {
    await ctx.cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack : error);
    process.exit(2);
  },
);
