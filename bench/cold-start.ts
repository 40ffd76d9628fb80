import { restApiEvent } from '../infra/local/events.js';
import { writeTenantAgents } from '../infra/local/fleet.js';
import { realisticAgents } from '../infra/local/generator.js';
import { agentsPartition } from '../lib/store/keys.js';
import type { BenchContext } from './context.js';
import { brokerToken } from './observations.js';
import { freshInvocation, type FreshRun } from './processes.js';
import { interleaved, median, n } from './stats.js';

/**
 * Cold start: spawn to first answer (import, initialisation, one invocation against the engine) of
 * the inventory and observations bundles and of the bare-SDK floor bundle, fresh processes,
 * interleaved. The bundles' sizes were taken when they were built.
 */
export async function coldStartFigure(ctx: BenchContext, observedAgentId: string): Promise<void> {
  await writeTenantAgents(ctx.db, { dataTable: ctx.dataTable }, 'bench-cold', realisticAgents('bench-cold', 25, { now: ctx.now }), 8);
  const runs = ctx.quick ? 5 : 9;
  ctx.say(`cold starts, ${runs} interleaved runs per bundle`);
  const token = await brokerToken(ctx);
  const observationsEvent = restApiEvent(
    ctx.fakeRequest(`/api/mcp/endpoint?agent_id=${encodeURIComponent(observedAgentId)}`, { Authorization: `Bearer ${token}`, 'X-Service-Reason': 'bench: cold start' }),
    '/api/mcp/endpoint',
  );
  const coldRuns: Record<string, FreshRun[]> = { inventory: [], observations: [], 'bare-sdk': [] };
  await interleaved(
    {
      inventory: async () => coldRuns.inventory!.push(await freshInvocation(ctx.bundleOf('inventory'), ctx.inventoryEvent('bench-cold'), ctx.serviceEnv)),
      observations: async () => coldRuns.observations!.push(await freshInvocation(ctx.bundleOf('observations'), observationsEvent, ctx.serviceEnv)),
      'bare-sdk': async () => coldRuns['bare-sdk']!.push(await freshInvocation(ctx.bundleOf('bare-sdk'), { pk: agentsPartition('bench-cold') }, ctx.serviceEnv)),
    },
    runs,
  );
  const floor = median(coldRuns['bare-sdk']!.map((r) => r.wallMs));
  for (const name of ['inventory', 'observations', 'bare-sdk']) {
    const list = coldRuns[name]!;
    if (list.some((r) => r.status !== 200)) throw new Error(`the ${name} cold start did not answer 200`);
    const ms = median(list.map((r) => r.wallMs));
    ctx.results.coldStart.push({ name, ms, importMs: median(list.map((r) => r.importMs)), ratio: ms / floor });
  }
  ctx.say(`  ${ctx.results.coldStart.map((c) => `${c.name} ${n(c.ms)} ms (${c.ratio.toFixed(2)}x)`).join(', ')}`);
}
