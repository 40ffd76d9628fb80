import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuFloorRun } from '../../bench/cpu-floor.js';
import { agentsPartition } from '../../lib/data-format/keys.js';
import { writeTenantAgents } from '../../local/fleet.js';
import { realisticAgents } from '../../local/generator.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine } from '../helpers/env.js';
import { eventFixture, setHeader, testContext } from '../helpers/events.js';
import { invokeStreamed } from '../helpers/streaming.js';

/** Enough agents for several Query pages (about 2,000 realistic agents a page), so that agents straddle page boundaries. */
const AGENTS = 5_000;
const TENANT = 'floor';

/**
 * The bench's CPU floor (bench/cpu-floor.ts) is held against the inventory as "the same work":
 * it must make the very answer the function makes, from the same pages, or its CPU says nothing.
 */
describe("Bench: the CPU floor makes the inventory's answer (a real engine, a realistic tenant over several pages)", () => {
  let engine: TestEngine;
  let handler: typeof import('../../functions/inventory/handler.js').handler;
  let authorizerContextOf: typeof import('../../lib/auth/caller.js').authorizerContextOf;

  beforeAll(async () => {
    engine = await startTestEngine();
    useEngine(engine);
    ({ handler } = await import('../../functions/inventory/handler.js'));
    ({ authorizerContextOf } = await import('../../lib/auth/caller.js'));
    // Heartbeats an hour ahead of the clock: every state is the same whenever either reads it.
    await writeTenantAgents(
      engine.db,
      engine.tables,
      TENANT,
      realisticAgents(TENANT, AGENTS, { now: new Date(Date.now() + 3_600_000) }),
      8,
    );
  }, 120_000);
  afterAll(async () => {
    await engine?.close();
  });

  const inventory = (coding: string) => {
    const event = eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
      const context = authorizerContextOf(
        { sub: 'bench', exp: 4_102_444_800, tenant_id: TENANT, scope: 'endpoints:read' },
        'tenant_id',
        'endpoint_groups',
      );
      e.requestContext.authorizer = {
        principalId: 'bench',
        ...Object.fromEntries(Object.entries(context).map(([k, v]) => [k, String(v)])),
      };
      setHeader(e, 'Accept-Encoding', coding);
    });
    return invokeStreamed(handler, event, testContext('inventory'));
  };
  const floor = (coding: 'gzip' | 'br') =>
    cpuFloorRun({
      endpoint: engine.endpoint,
      table: engine.tables.dataTable,
      pk: agentsPartition(TENANT),
      coding,
      heartbeatEdge: new Date(Date.now() - 120_000).toISOString(),
      keep: true,
    });

  it('gives the same JSON and the same gzip bytes as the function, every agent once, over every page', async () => {
    const answer = await inventory('gzip');
    const run = await floor('gzip');

    expect(answer.statusCode).toBe(200);
    expect(run.pages).toBeGreaterThan(2);
    expect(run.agents).toBe(AGENTS);
    expect(gunzipSync(run.compressed ?? Buffer.alloc(0)).toString('utf8')).toBe(answer.body);
    expect(run.jsonBytes).toBe(Buffer.byteLength(answer.body));
    expect(run.bytes).toBe(answer.raw.length);
    expect(JSON.parse(answer.body)).toHaveLength(AGENTS);
  });

  it('gives the same JSON with br, compressed by the service’s own brotli settings', async () => {
    const answer = await inventory('br');
    const run = await floor('br');

    expect(brotliDecompressSync(run.compressed ?? Buffer.alloc(0)).toString('utf8')).toBe(answer.body);
    // Flushed after each page as the service does: the sizes differ by a few bytes at most (where the last flush falls).
    expect(Math.abs(run.bytes - answer.raw.length)).toBeLessThan(64);
  });
});
