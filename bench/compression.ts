import { BROTLI_QUALITIES, GZIP_LEVELS } from './compression-levels.js';
import type { BenchContext } from './context.js';
import { startFunctionCore } from './processes.js';
import { n } from './stats.js';

/**
 * gzip levels 1, 4, 6 and 9 and brotli qualities 3, 4 and 5 on a realistic tenant's whole
 * inventory (100,000 agents; 10,000 in a quick run): size, time and CPU, the basis of the service's
 * gzip level and brotli quality. Run on the function's core and Node, in a process of its own
 * without the inventory's heap bounds (the whole text is held, which the service never does).
 */
export async function compressionFigure(ctx: BenchContext): Promise<void> {
  const agents = ctx.quick ? 10_000 : 100_000;
  ctx.say(`compression on a realistic ${n(agents)}-agent inventory: gzip ${GZIP_LEVELS.join(', ')}; br ${BROTLI_QUALITIES.join(', ')}`);
  const core = await startFunctionCore({
    node: ctx.runtime.node.path,
    cpus: ctx.runtime.cpus,
    environment: { ...process.env, NODE_OPTIONS: '' },
  });
  try {
    const { gzip, brotli } = await core.run('compressionLevels', { agents, now: ctx.now.toISOString() });
    ctx.results.gzipLevels.push(...gzip);
    ctx.results.brotliQualities = brotli;
    const line = (name: string, run: { bytes: number; cpuMs: number }): string =>
      `${name} ${(run.bytes / 1_000_000).toFixed(2)} MB in ${n(run.cpuMs)} ms of CPU`;
    ctx.say(`  ${[...gzip.map((g) => line(`gzip ${g.level}`, g)), ...brotli.map((b) => line(`br ${b.quality}`, b))].join(', ')}`);
  } finally {
    await core.stop();
  }
}
