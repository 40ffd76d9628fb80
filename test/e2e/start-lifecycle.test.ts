import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { startEmbeddedEngine } from '../../local/engine.js';
import { freePort, freshStartEnv, hasEnded, killStarted, npmStart, tokenFor, waitFor } from '../helpers/npm-start.js';

/**
 * `npm start` as its own process while it starts: the first seconds while it seeds, a store that
 * comes back (the commands it prints: cli.test.ts; stopping it: start-stop.test.ts). Each test runs its own
 * `npm start` on its own ports and folders: the tests of a group run at the same time.
 */

afterAll(killStarted);

describe.concurrent('E2E: npm start while it starts', () => {
  it('answers 503 with Retry-After while it seeds, never a partial list, then the whole tenant', async ({ expect }) => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-'));
    const fleet = join(dir, 'fleet.json');
    const agents = Array.from({ length: 1500 }, (_, i) => ({
      agent_id: `a-${String(i).padStart(4, '0')}`,
      hostname: `h-${i}`,
      os: 'linux',
      arch: 'x86_64',
      version: '1',
    }));
    await writeFile(fleet, JSON.stringify({ tenants: [{ tenant_id: 'big', agents }] }));
    const port = await freePort();
    // Metric lines asked for: one EMF line per request (they are off by default, see below).
    const env = { ...(await freshStartEnv()), PORT: String(port), SEED: fleet, POWERTOOLS_METRICS_DISABLED: 'false' };
    const token = await tokenFor('big', env); // signed with the key in LOCAL_DIR, which the stack then uses
    const run = npmStart(env);

    const seen = new Set<string>();
    while (!run.output().includes('Stop with Ctrl-C')) {
      if (hasEnded(run.child)) {
        await run.exited; // its last words may still be in the pipes
        throw new Error(`npm start ended before its banner:\n${run.output()}`);
      }
      let res: Response;
      try {
        res = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });
      } catch (error) {
        // Not listening yet is the only failure to wait through; a body cut short is read below and fails the test.
        if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNREFUSED') throw error;
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const body = await res.text();
      seen.add(res.status === 200 ? `200:${(JSON.parse(body) as unknown[]).length}` : `${res.status}:${res.headers.get('retry-after')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const after = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });

    expect([...seen].filter((s) => s !== '503:1' && s !== '200:1500')).toEqual([]);
    expect(seen.has('503:1')).toBe(true);
    expect((await after.json()) as unknown[]).toHaveLength(1500);
    await waitFor(run, /"Requests":1,.*"operation":"listEndpointInventory"|"operation":"listEndpointInventory".*"Requests":1/);
    run.child.kill('SIGTERM');
    await run.exited;
  }, 120_000);

  it('keeps listening when the store is down at start, answers 503 rather than an empty list, and seeds once it answers', async ({
    expect,
  }) => {
    const [port, dynamoPort] = [await freePort(), await freePort()];
    // A one-agent fleet: what is proven is the retry, not the demo (whose seeding is costly).
    const fleet = join(await mkdtemp(join(tmpdir(), 'fleet-')), 'fleet.json');
    await writeFile(
      fleet,
      JSON.stringify({
        tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] }],
      }),
    );
    const env = {
      ...(await freshStartEnv()),
      PORT: String(port),
      DYNAMODB_ENDPOINT: `http://127.0.0.1:${dynamoPort}`,
      DYNAMODB_MAX_ATTEMPTS: '1',
      DYNAMODB_TIMEOUT_MS: '500',
      SEED: fleet,
    };
    const token = await tokenFor('acme', env); // signed with the key in LOCAL_DIR, which the stack then uses
    const run = npmStart(env);
    await waitFor(run, 'Stop with Ctrl-C');
    const down = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });

    expect(run.output()).toMatch(/is not usable .*Trying again every 5 s/);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    expect(await down.text()).toMatch(/^The inventory store is unavailable right now; try again later\./);
    const engine = await startEmbeddedEngine({ port: dynamoPort });
    try {
      await waitFor(run, 'answers again: ready', 30_000);
      expect(run.output()).toContain(`seeded ${fleet}: 1 tenant, 1 agent, 0 samples`);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      await engine.close();
    }
  }, 120_000);
});
