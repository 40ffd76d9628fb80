import { gunzipSync } from 'node:zlib';
import { readScopeClaim, scopeContextValue } from '../lib/auth/endpoint-scope.js';
import type { BenchContext } from './context.js';
import { inventorySizes, tenantOf } from './inventory.js';
import { type FreshRun, invokeFresh, invokeWarm, stackFunction } from './sandbox.js';
import { at, interleaved, median, n } from './stats.js';

/** The scoped token's groups: one region of the generator's three (about 45% of a generated tenant). */
export const BENCH_SCOPE = ['emea'] as const;

/** The inventory event of a token with this endpoint scope claim, as the token authorizer hands it over. */
function scopedEvent(ctx: BenchContext, tenant: string, claim: unknown): unknown {
  const event = ctx.inventoryEvent(tenant) as { requestContext: { authorizer: Record<string, string> } };
  const scope = readScopeClaim(claim);
  const value = scope === 'invalid' ? 'invalid' : scopeContextValue(scope);
  if (value !== undefined) event.requestContext.authorizer.scope = value;
  return event;
}

/** Agents in a gzip inventory answer, counted in its bytes (no parse of a possibly large array). */
function agentsIn(gzipBody: Buffer): number {
  const json = gunzipSync(gzipBody);
  const needle = Buffer.from('{"agent_id":');
  let count = 0;
  for (let at = json.indexOf(needle); at !== -1; at = json.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/**
 * GET /api/agents for a scoped token (the endpoint_groups claim) next to an unscoped one, on the
 * run's largest realistic tenant: the handler interleaved (same pages read, the scoped one keeps
 * about half), and one invocation each in a fresh instance (peak RSS, CPU). The scope
 * filter sits in the page-by-page reader, so a scoped read must cost no more time nor memory.
 */
export async function scopedInventoryFigure(ctx: BenchContext): Promise<void> {
  const agents = at(inventorySizes(ctx.quick), -1);
  const tenant = tenantOf(agents);
  const unscopedEvent = ctx.inventoryEvent(tenant);
  const scoped = scopedEvent(ctx, tenant, [...BENCH_SCOPE]);
  // The last answer of each kind is kept, to count what it listed once the timing is done.
  const last: Record<'unscoped' | 'scoped', Buffer> = { unscoped: Buffer.alloc(0), scoped: Buffer.alloc(0) };
  const list = async (kind: 'unscoped' | 'scoped', event: unknown): Promise<void> => {
    const answer = await invokeWarm(stackFunction(ctx.stack.functions, 'inventory'), event, true);
    if (answer.failedWith) throw new Error(`the inventory failed mid-stream: ${answer.failedWith}`);
    last[kind] = answer.kept ?? Buffer.alloc(0);
  };
  const runs = ctx.quick ? 3 : 5;
  ctx.say(`scoped inventory, ${n(agents)} agents: unscoped and scoped (${BENCH_SCOPE.join(' ')}) handler, ${runs} interleaved runs`);
  const times = await interleaved({ unscoped: () => list('unscoped', unscopedEvent), scoped: () => list('scoped', scoped) }, runs);
  const listed = { unscoped: agentsIn(last.unscoped), scoped: agentsIn(last.scoped) };
  last.unscoped = last.scoped = Buffer.alloc(0);
  ctx.say('  fresh instances (peak RSS, CPU)');
  const fresh: Record<'unscoped' | 'scoped', FreshRun> = {
    unscoped: await invokeFresh(ctx.freshSandbox('inventory'), unscopedEvent),
    scoped: await invokeFresh(ctx.freshSandbox('inventory'), scoped),
  };
  const figure = (kind: 'unscoped' | 'scoped') => ({
    listed: listed[kind],
    ms: median(times[kind]),
    status: fresh[kind].status,
    maxRssMiB: fresh[kind].maxRssMiB,
    cpuMs: fresh[kind].cpuMs,
  });
  ctx.results.scopedInventory = { agents, groups: [...BENCH_SCOPE], unscoped: figure('unscoped'), scoped: figure('scoped') };
  const { unscoped: u, scoped: s } = ctx.results.scopedInventory;
  ctx.say(
    `  unscoped: ${n(u.listed)} listed, ${n(u.ms)} ms, fresh ${n(u.maxRssMiB)} MiB; ` +
      `scoped: ${n(s.listed)} listed, ${n(s.ms)} ms (${(s.ms / u.ms).toFixed(2)}x), fresh ${n(s.maxRssMiB)} MiB`,
  );
}
