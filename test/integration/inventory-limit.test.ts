import { gunzipSync } from 'node:zlib';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/inventory/handler.js';
import { writeTenantAgents, type FleetAgent } from '../../infra/local/fleet.js';
import { seededRandom } from '../../infra/local/generator.js';
import { AgentInventory } from '../../lib/contract/schemas.js';
import { JsonArrayStream, LAMBDA_RESPONSE_LIMIT_BYTES, lambdaResponseBytes, type JsonResult } from '../../lib/http.js';
import { summarizeAgent } from '../../lib/inventory/merge.js';
import { expectResponseMatchesContract } from '../helpers/contract.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine } from '../helpers/env.js';
import { eventFixture, setHeader, testContext } from '../helpers/events.js';

type Result = JsonResult & { isBase64Encoded?: boolean };

/**
 * Agents whose hostnames are 4,000 characters gzip cannot shrink much, so about 1,600 of them reach
 * Lambda's 6,291,456-byte response limit (realistic agents reach it near 70,000: the bench measures
 * that; this test needs the limit itself, quickly). Never connected, so a summary does not depend
 * on the clock.
 */
function heavyAgents(count: number): FleetAgent[] {
  const rnd = seededRandom(9);
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.';
  return Array.from({ length: count }, (_, i) => {
    let hostname = '';
    for (let c = 0; c < 4_000; c++) hostname += alphabet[Math.floor(rnd() * alphabet.length)];
    return { agent_id: `heavy-${String(i).padStart(5, '0')}`, hostname, os: 'linux', arch: 'x86_64', version: '2.4.1' };
  });
}

/** The response the service would give for these agents, computed without the store (same summaries, same stream). */
async function offlineResponse(agents: FleetAgent[]): Promise<number> {
  const stream = new JsonArrayStream({ acceptEncoding: 'gzip', keyOf: (e) => (e as { agent_id: string }).agent_id });
  for (const a of agents) {
    const summary = summarizeAgent({ agent_id: a.agent_id, hostname: a.hostname, os: a.os, arch: a.arch, version: a.version }, undefined, { now: new Date(), onlineGraceSeconds: 120 });
    stream.add(summary.agent_id, JSON.stringify(summary));
  }
  try {
    return lambdaResponseBytes(await stream.respond(200, { headers: { 'X-Unreadable-Records': '0' }, tooLarge: (b) => String(b) }));
  } catch (error) {
    return Number((error as Error).message);
  }
}

async function listAs(tenant: string): Promise<Result> {
  const event = eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
    e.requestContext.authorizer!.tenant = tenant;
    setHeader(e, 'Accept-Encoding', 'gzip, deflate, br');
  });
  return (await handler(event, testContext('inventory'))) as Result;
}

describe("Handler: inventory at Lambda's real response limit (6,291,456 bytes, as Lambda measures it)", () => {
  let engine: TestEngine;
  let fits: FleetAgent[];

  beforeAll(async () => {
    engine = await startTestEngine();
    useEngine(engine);
    // The largest number of these agents whose response fits, found offline with the service's own code.
    const all = heavyAgents(1_800);
    const per = ((await offlineResponse(all.slice(0, 1_000))) - (await offlineResponse(all.slice(0, 1)))) / 999;
    let n = Math.floor((LAMBDA_RESPONSE_LIMIT_BYTES - (await offlineResponse(all.slice(0, 1)))) / per) + 1;
    while ((await offlineResponse(all.slice(0, n))) > LAMBDA_RESPONSE_LIMIT_BYTES) n -= 1;
    while ((await offlineResponse(all.slice(0, n + 1))) <= LAMBDA_RESPONSE_LIMIT_BYTES) n += 1;
    fits = all.slice(0, n);
    await writeTenantAgents(engine.db, engine.tables, 'fits', fits, 8);
    await writeTenantAgents(engine.db, engine.tables, 'over', all.slice(0, n + 1), 8);
  }, 120_000);

  afterAll(async () => {
    await engine.close();
  });

  it('lists the largest tenant that fits, compressed, in a response of at most 6,291,456 bytes', async () => {
    const response = await listAs('fits');

    expect(response.statusCode).toBe(200);
    expect(response.headers['Content-Encoding']).toBe('gzip');
    expect(lambdaResponseBytes(response)).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    // Within one agent of the limit: this is the limit itself, not a margin below it.
    expect(lambdaResponseBytes(response)).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES - 5_000);
    const listed = AgentInventory.parse(JSON.parse(gunzipSync(Buffer.from(response.body, 'base64')).toString('utf8')));
    expect(listed.map((a) => a.agent_id)).toEqual(fits.map((a) => a.agent_id));
  });

  it('answers one more agent with a text/plain 507 that gives the size and what to do, never a cut list or a bare 5xx', async () => {
    const response = await listAs('over');

    expectResponseMatchesContract('listEndpointInventory', { status: response.statusCode, headers: response.headers, body: response.body });
    expect(response.statusCode).toBe(507);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toMatch(
      new RegExp(`^This tenant's inventory is too large for one response: its ${fits.length + 1} endpoints take 6\\.0 MiB even compressed, and a response may carry at most 6 MiB \\(about ${fits.length} endpoints like these\\)\\. Ask the service operator to split the tenant; retrying will not help\\. \\(request id: [0-9a-f-]{36}\\)\\n$`),
    );
    expect(lambdaResponseBytes(response)).toBeLessThan(2_000);
  });
});
