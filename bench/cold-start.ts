import { agentsPartition } from '../lib/data-format/keys.js';
import { restApiEvent } from '../local/events.js';
import { writeTenantAgents } from '../local/fleet.js';
import { realisticAgents } from '../local/generator.js';
import { continueTrace } from '../local/trace-header.js';
import type { BenchContext } from './context.js';
import { brokerToken } from './observations.js';
import { BARE_MCP, BENCH_BUNDLES, type BenchBundle, MCP_DOORS, MCP_RUNTIME_SDK } from './report.js';
import { type FreshRun, invokeFresh } from './sandbox.js';
import { interleaved, median, n } from './stats.js';

/** The size of the tenant every cold start reads. */
const COLD_AGENTS = 25;
/** The deployed functions whose cold start is also measured with an invocation X-Ray samples (each loads its tracer for it). */
const SAMPLED = ['inventory', 'observations', 'mcp'] as const;
type Traced = (typeof SAMPLED)[number];

/**
 * Cold start: spawn to first answer (Node, the runtime client and the bundle's import: Lambda's
 * Init Duration; then one invocation against the engine) of the inventory, observations and MCP
 * bundles, of the MCP door with the AWS SDK from the runtime (MCP_RUNTIME_SDK), and of the two
 * floors: the bare-SDK bundle, and the bare MCP SDK (the MCP door's: the SDK's handler, one tool,
 * one Query), each in a fresh instance of the local sandbox, interleaved. The invocation is one X-Ray
 * does not sample, as the floors trace nothing; the traced functions (SAMPLED) are also started for
 * a sampled one, which loads their tracer. The bundles' sizes were taken when they were built.
 */
export async function coldStartFigure(ctx: BenchContext, observedAgentId: string): Promise<void> {
  const runs = ctx.quick ? 5 : 9;
  ctx.say(`cold starts, ${runs} interleaved runs per bundle`);
  const events = await coldStartEvents(ctx, observedAgentId);
  const coldRuns = Object.fromEntries(BENCH_BUNDLES.map((name) => [name, [] as FreshRun[]])) as Record<BenchBundle, FreshRun[]>;
  const sampledRuns = Object.fromEntries(SAMPLED.map((name) => [name, [] as FreshRun[]])) as Record<Traced, FreshRun[]>;
  await interleaved(
    {
      ...Object.fromEntries(
        BENCH_BUNDLES.map((name) => [name, async () => coldRuns[name].push(await invokeFresh(ctx.freshSandbox(name), events[name]))]),
      ),
      // The same first invocation with a trace X-Ray samples (a new root, as API Gateway passes it on): the tracer is loaded for it.
      ...Object.fromEntries(
        SAMPLED.map((name) => [
          `${name} sampled`,
          async () =>
            sampledRuns[name].push(await invokeFresh(ctx.freshSandbox(name), events[name], { traceId: continueTrace(undefined) })),
        ]),
      ),
    },
    runs,
  );
  const floor = median(coldRuns['bare-sdk'].map((r) => r.wallMs));
  for (const name of BENCH_BUNDLES) {
    const list = coldRuns[name];
    const sampled = SAMPLED.includes(name as Traced) ? sampledRuns[name as Traced] : [];
    if ([...list, ...sampled].some((r) => r.status !== 200)) throw new Error(`the ${name} cold start did not answer 200`);
    // A tool's failure is a 200 too: the MCP door's answer must be the tenant's list.
    const unlisted = MCP_DOORS.includes(name) ? [...list, ...sampled].find((r) => listedTotal(r.body) !== COLD_AGENTS) : undefined;
    if (unlisted) throw new Error(`the ${name} cold start did not list the ${COLD_AGENTS} endpoints: ${unlisted.body?.slice(0, 500)}`);
    // The bare MCP SDK's one tool answers with the page's items as text: a tool error would be a 200 without them.
    const bareFailed = name === BARE_MCP ? list.find((r) => !r.body?.includes('\\"agent_id\\"')) : undefined;
    if (bareFailed) throw new Error(`the ${name} cold start did not answer with the tenant's records: ${bareFailed.body?.slice(0, 500)}`);
    ctx.results.coldStart.push({
      name,
      ...coldFigure(list, floor),
      ...(sampled.length > 0 ? { sampled: coldFigure(sampled, floor) } : {}),
    });
  }
  ctx.say(
    `  ${ctx.results.coldStart.map((c) => `${c.name} ${n(c.ms)} ms (${c.ratio.toFixed(2)}x${c.sampled ? `; sampled ${n(c.sampled.ms)} ms` : ''}), CPU ${n(c.cpuMs ?? 0)} ms`).join(', ')}`,
  );
}

/**
 * The first event of each bundle's cold start (the tenant of COLD_AGENTS it reads written first):
 * the inventory of that tenant, a dashboard of the observed endpoint with the broker's token, the
 * MCP door's `tools/call` of list_endpoints (the bare MCP SDK's too), and the bare-SDK floor's one Query.
 */
async function coldStartEvents(ctx: BenchContext, observedAgentId: string): Promise<Record<BenchBundle, unknown>> {
  await writeTenantAgents(
    ctx.db,
    { dataTable: ctx.dataTable },
    'bench-cold',
    realisticAgents('bench-cold', COLD_AGENTS, { now: ctx.now }),
    8,
  );
  const token = await brokerToken(ctx);
  const observationsEvent = restApiEvent(
    ctx.fakeRequest(`/api/mcp/endpoint?agent_id=${encodeURIComponent(observedAgentId)}`, {
      Authorization: `Bearer ${token}`,
      'X-Service-Reason': 'bench: cold start',
    }),
    '/api/mcp/endpoint',
  );
  // The MCP door's first call: a tools/call of list_endpoints, the tenant's agents in its answer.
  const mcpEvent = ctx.publicDoorEvent('/api/mcp', 'bench-cold', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_endpoints', arguments: {} } }),
  });
  return {
    inventory: ctx.inventoryEvent('bench-cold'),
    observations: observationsEvent,
    mcp: mcpEvent,
    [MCP_RUNTIME_SDK]: mcpEvent,
    [BARE_MCP]: mcpEvent,
    'bare-sdk': { pk: agentsPartition('bench-cold') },
  };
}

/** A cold start's medians over its fresh instances, its time against the bare-SDK floor's `floorMs`. */
function coldFigure(runs: readonly FreshRun[], floorMs: number): { ms: number; importMs: number; ratio: number; cpuMs: number } {
  const ms = median(runs.map((r) => r.wallMs));
  return { ms, importMs: median(runs.map((r) => r.initMs)), ratio: ms / floorMs, cpuMs: median(runs.map((r) => r.cpuMs)) };
}

/** The `total` of a `list_endpoints` result in a JSON-RPC answer's body; undefined for anything else. */
function listedTotal(body: string | undefined): number | undefined {
  try {
    return (JSON.parse(body ?? '') as { result?: { structuredContent?: { total?: number } } }).result?.structuredContent?.total;
  } catch {
    return undefined;
  }
}
