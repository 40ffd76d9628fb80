import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { BenchContext } from './context.js';
import { type CpuProfile, profileFigure, summariseProfile } from './cpu-profile.js';
import { inventorySizes, tenantOf } from './inventory.js';
import { invokeFresh } from './sandbox.js';
import { n } from './stats.js';

/** The profiler's sampling interval (µs): its default, fine enough for a run of a minute. */
const INTERVAL_US = 1_000;

/**
 * Where the inventory's CPU goes: one fresh instance of the sandbox lists the largest tenant with
 * gzip under `node --cpu-prof` (added to the instance's NODE_OPTIONS, with a preload that makes a
 * SIGTERM a normal exit, when Node writes the profile: the sandbox otherwise stops an instance with
 * SIGKILL). The profile is read back to the sources through the bundle's source map and summed by
 * layer (bench/cpu-profile.ts), beside the instance's CPU by thread from /proc.
 */
export async function inventoryProfileFigure(ctx: BenchContext): Promise<void> {
  const agents = inventorySizes(ctx.quick).at(-1) ?? 0;
  ctx.say(`a CPU profile of a fresh inventory instance listing ${n(agents)} agents`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  try {
    const profiles = join(dir, 'profiles');
    mkdirSync(profiles);
    const exitOnTerm = join(dir, 'exit-on-sigterm.mjs');
    writeFileSync(exitOnTerm, "process.on('SIGTERM', () => process.exit(0));\n");
    const nodeOptions = [
      ctx.stack.functions.environment('inventory').NODE_OPTIONS ?? '',
      '--cpu-prof',
      `--cpu-prof-dir=${profiles}`,
      `--cpu-prof-interval=${INTERVAL_US}`,
      `--import=${pathToFileURL(exitOnTerm).href}`,
    ].join(' ');
    const run = await invokeFresh(
      ctx.freshSandbox('inventory', { environment: { NODE_OPTIONS: nodeOptions } }),
      ctx.inventoryEvent(tenantOf(agents), 'gzip'),
      {
        async beforeStop(pid) {
          process.kill(pid, 'SIGTERM');
          for (let waited = 0; waited < 120_000 && readdirSync(profiles).length === 0; waited += 100) await sleep(100);
          // Node writes the file as the process exits: give it the time to finish.
          await sleep(1_000);
        },
      },
    );
    const [file] = readdirSync(profiles);
    if (run.status !== 200 || !file || !run.threads) throw new Error(`the profiled inventory answered ${run.status} and wrote no profile`);
    const profile = JSON.parse(readFileSync(join(profiles, file), 'utf8')) as CpuProfile;
    const bundle = ctx.bundleOf('inventory');
    const url = pathToFileURL(bundle).href;
    const maps = new Map<string, SourceMapPayload>();
    if (existsSync(`${bundle}.map`)) maps.set(url, JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as SourceMapPayload);
    const figure = profileFigure(summariseProfile(profile, maps), {
      agents,
      coding: 'gzip',
      cpuMs: run.cpuMs,
      threads: run.threads,
      intervalUs: INTERVAL_US,
      samples: profile.samples.length,
    });
    ctx.results.inventoryProfile = figure;
    ctx.say(
      `  ${n(figure.cpuMs)} ms of CPU (main ${n(figure.threads.mainMs)}, GC helpers ${n(figure.threads.gcHelpersMs)}, pool ${n(figure.threads.poolMs)}); ` +
        figure.byLayer
          .slice(0, 6)
          .map((l) => `${l.layer} ${n(l.ms)} ms`)
          .join(', '),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
