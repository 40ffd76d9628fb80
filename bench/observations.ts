import { randomUUID } from 'node:crypto';
import { connectionKey, durableAgentKey, policyKey, sampleSortKey, samplesPartition } from '../lib/data-format/keys.js';
import { type AuditItem, auditRecord } from '../lib/store/audit.js';
import { restApiEvent } from '../local/events.js';
import { writeTenantAgents } from '../local/fleet.js';
import { realisticAgents } from '../local/generator.js';
import { brokerTokenFor } from '../local/token-exchange.js';
import type { BenchContext } from './context.js';
import { httpGet } from './floors.js';
import { invokeWarm, stackFunction } from './sandbox.js';
import { at, interleaved, median, n } from './stats.js';

export const windows = (quick: boolean): number[] => (quick ? [60, 1_440] : [60, 1_440, 10_080]);
export const OBSERVED_TENANT = 'bench-obs';

/** What the MCP broker sends: a token from the token exchange, naming the broker as actor. */
export const brokerToken = (ctx: BenchContext): Promise<string> =>
  brokerTokenFor(
    ctx.issuer,
    {
      issuer: ctx.issuerUrl,
      tenantClaim: ctx.cfg.tenantClaim,
      scopeClaim: ctx.cfg.scopeClaim,
      clientId: ctx.cfg.brokerClientId,
      audience: ctx.cfg.observationsAudience,
      lifetimeSeconds: 3_600,
    },
    { subject: 'bench', tenant: OBSERVED_TENANT },
  );

/** One endpoint with a week of 1-minute samples (and a few spare minutes), through the seed CLI's writer. */
export async function seedObservedEndpoint(ctx: BenchContext): Promise<string> {
  const observed = at([...realisticAgents(OBSERVED_TENANT, 1, { now: ctx.now, samples: Math.max(...windows(ctx.quick)) + 60 })]);
  await writeTenantAgents(ctx.db, { dataTable: ctx.dataTable }, OBSERVED_TENANT, [observed], 8);
  return observed.agent_id;
}

/** An audit item as the handler writes one for a dashboard read (lib/observations/audit-trail.ts). */
function floorAuditItem(at: Date, agentId: string, minutes: number, broker: string): AuditItem {
  const auditId = randomUUID();
  return {
    audit_id: auditId,
    request_id: auditId,
    api_request_id: randomUUID(),
    at: at.toISOString(),
    tenant_id: OBSERVED_TENANT,
    subject: 'bench',
    broker,
    agent_id: agentId,
    scope: null,
    reason: 'bench: dashboard read',
    ticket_number: null,
    ticket_system: null,
    reason_source: 'argument',
    ticket_source: null,
    minutes,
    limit: 100,
    outcome: 'allowed',
    status_code: 200,
  };
}

/**
 * GET /api/mcp/endpoint over windows of 60, 1440 and 10080 minutes: the handler (token check,
 * reads, audit write) and HTTP, against a bare SDK Query of the sample partition over the window,
 * and against the bare SDK making the handler's own requests (sameRequestsFloor); the floors run
 * on the function's core (bench/function-core.ts), as the handler does, each timed there.
 */
export async function observationsFigure(ctx: BenchContext, agentId: string): Promise<void> {
  const headers = { Authorization: `Bearer ${await brokerToken(ctx)}`, 'X-Service-Reason': 'bench: dashboard read' };
  for (const minutes of windows(ctx.quick)) {
    const path = `/api/mcp/endpoint?agent_id=${encodeURIComponent(agentId)}&minutes=${minutes}`;
    const pk = samplesPartition(OBSERVED_TENANT, agentId);
    let samples = 0;
    let handlerStatus = 0;
    const runs = ctx.quick ? 9 : 15;
    ctx.say(`observations, ${minutes}-minute window: floor, handler and HTTP, ${runs} interleaved runs`);
    const times = await interleaved(
      {
        floor: async () => {
          const at = new Date();
          const run = await ctx.functionCore.run('windowFloor', {
            endpoint: ctx.engineEndpoint,
            table: ctx.dataTable,
            pk,
            from: sampleSortKey(new Date(at.getTime() - minutes * 60_000)),
            to: sampleSortKey(at),
          });
          samples = run.samples;
          return run;
        },
        requestsFloor: async () => {
          const at = new Date();
          const keys = {
            policy: policyKey(OBSERVED_TENANT),
            durable: durableAgentKey(OBSERVED_TENANT, agentId),
            connection: connectionKey(OBSERVED_TENANT, agentId),
          };
          const window = { pk, from: sampleSortKey(new Date(at.getTime() - minutes * 60_000)), to: sampleSortKey(at) };
          return ctx.functionCore.run('sameRequestsFloor', {
            endpoint: ctx.engineEndpoint,
            tables: { dataTable: ctx.dataTable, auditTable: ctx.auditTable },
            keys,
            window,
            audit: auditRecord(floorAuditItem(at, agentId, minutes, ctx.cfg.brokerClientId)),
          });
        },
        // A refusal is no read: timing one would measure the wrong thing.
        handler: async () => {
          handlerStatus = (
            await invokeWarm(
              stackFunction(ctx.stack.functions, 'observations'),
              restApiEvent(ctx.fakeRequest(path, headers), '/api/mcp/endpoint'),
            )
          ).status;
          if (handlerStatus !== 200) throw new Error(`the observations handler answered ${handlerStatus}, not a dashboard`);
        },
        http: async () => {
          const res = await httpGet(`${ctx.stack.privateUrl}${path}`, headers);
          if (res.status !== 200) throw new Error(`the private listener answered ${res.status}, not a dashboard`);
        },
      },
      runs,
      2,
    );
    const floorMs = median(times.floor);
    const requestsFloorMs = median(times.requestsFloor);
    const handlerMs = median(times.handler);
    const httpMs = median(times.http);
    ctx.results.observations.push({
      minutes,
      samples,
      floorMs,
      requestsFloorMs,
      requestsRatio: handlerMs / requestsFloorMs,
      handlerMs,
      httpMs,
      handlerRatio: handlerMs / floorMs,
      httpRatio: httpMs / floorMs,
      handlerStatus,
    });
    const r = at(ctx.results.observations, -1);
    ctx.say(
      `  ${n(samples)} samples: floor ${r.floorMs.toFixed(1)} ms (same requests ${r.requestsFloorMs.toFixed(1)} ms), handler ${r.handlerMs.toFixed(1)} ms (${r.handlerRatio.toFixed(2)}x; ${r.requestsRatio.toFixed(2)}x the same requests; ${handlerStatus}), HTTP ${r.httpMs.toFixed(1)} ms (${r.httpRatio.toFixed(2)}x)`,
    );
  }
}
