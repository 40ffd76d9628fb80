import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentInventory } from '../../lib/contract/schemas.js';
import { agentSortKey } from '../../lib/data-format/keys.js';
import { writeTenantAgents } from '../../local/fleet.js';
import { realisticAgents } from '../../local/generator.js';
import { expectResponseMatchesContract } from '../helpers/contract.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { countingProxy } from '../helpers/faults.js';
import { localDirWithKey } from '../helpers/local-dir.js';
import { openPaced } from '../helpers/paced-client.js';
import { startOnFreePorts, type TestStack, withTokens } from '../helpers/stack.js';
import { listTenantAgentRecords } from '../helpers/store.js';

/**
 * GET /api/agents over real HTTP through the local listener, which writes a streaming function's
 * bytes to the socket as the function writes them (chunked), as API Gateway's streaming
 * integration does. The engine sits behind a proxy that counts the Query pages read (and, where a
 * test says so, fails them: a fault injector), so a test can see how far the read had got when
 * the client received its first bytes.
 */

/** Five store pages of realistic agents (1 MB each): enough for pages still unread at the first byte. */
const AGENTS = 10_000;
/** A tenant of one store page, for the tests that read only which coding the answer has. */
const FEW_AGENTS = 20;

interface Received {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Query pages the store had been asked for when the first body byte reached the client. */
  queriesAtFirstByte: number;
  /** How the transfer ended: complete, or broken (the connection cut before the chunked body's end). */
  ending: 'complete' | 'broken';
}

describe('E2E: GET /api/agents streamed through the local listener', () => {
  let engine: TestEngine;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  let stack: TestStack;
  let failFrom: number | undefined;
  /** Query pages of the whole tenant, counted by the store's own reader before any test runs. */
  let fullRead = 0;

  beforeAll(async () => {
    engine = await startTestEngine();
    await writeTenantAgents(engine.db, engine.tables, 'big', realisticAgents('big', AGENTS, { now: new Date() }), 8);
    await writeTenantAgents(engine.db, engine.tables, 'few', realisticAgents('few', FEW_AGENTS, { now: new Date() }), 8);
    fullRead = (await listTenantAgentRecords(engine.db, engine.tables.dataTable, 'big')).pages;
    proxy = await countingProxy(engine.endpoint, {
      get failFrom() {
        return failFrom;
      },
    });
    stack = withTokens(
      await startOnFreePorts({
        dynamoEndpoint: proxy.endpoint,
        seed: 'none',
        localDir: await localDirWithKey('stream-'),
        env: {
          ...process.env,
          DATA_TABLE: engine.tables.dataTable,
          AUDIT_TABLE: engine.tables.auditTable,
          // Faults here are resets, never waits: a slow engine page is no fault.
          DYNAMODB_MAX_ATTEMPTS: '2',
          DYNAMODB_TIMEOUT_MS: '15000',
        },
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
    await engine?.close();
  });

  const token = (tenant = 'big'): Promise<string> => stack.token({ tenant });

  /** A GET as curl makes it, reading the body chunk by chunk; `stopAfterFirstChunk` hangs up after the first body bytes. */
  async function fetchAgents(headers: Record<string, string>, stopAfterFirstChunk = false): Promise<Received> {
    const before = proxy.queries();
    return new Promise((resolve, reject) => {
      const req = request(`${stack.publicUrl.replace('localhost', '127.0.0.1')}/api/agents`, { headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        let queriesAtFirstByte = -1;
        const done = (ending: Received['ending']): void =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), queriesAtFirstByte, ending });
        res.on('data', (chunk: Buffer) => {
          if (queriesAtFirstByte < 0) queriesAtFirstByte = proxy.queries() - before;
          chunks.push(chunk);
          if (stopAfterFirstChunk) {
            req.destroy();
            done('broken');
          }
        });
        res.on('end', () => done('complete'));
        res.on('error', () => done('broken'));
        res.on('aborted', () => done('broken'));
      });
      req.on('error', (error) => (stopAfterFirstChunk ? undefined : reject(error)));
      req.end();
    });
  }

  const openAgents = (headers: Record<string, string>) =>
    openPaced(`${stack.publicUrl.replace('localhost', '127.0.0.1')}/api/agents`, headers);

  /** The agent ids of a decoded answer, once it is checked against the contract and found to hold the whole tenant. */
  function wholeInventory(res: Received, text: string): string[] {
    expectResponseMatchesContract('listEndpointInventory', {
      status: res.status,
      headers: { 'content-type': String(res.headers['content-type']), 'cache-control': String(res.headers['cache-control']) },
      body: text,
    });
    const ids = AgentInventory.parse(JSON.parse(text)).map((a) => a.agent_id);
    expect(ids).toHaveLength(AGENTS);
    return ids;
  }

  const byKey = (ids: string[]): string[] =>
    [...ids].sort((a, b) => Buffer.compare(Buffer.from(agentSortKey(a, 'D')), Buffer.from(agentSortKey(b, 'D'))));

  it('sends the first bytes of a large tenant while its later pages are still unread, chunked, then the whole tenant as one gzip array', async () => {
    failFrom = undefined;
    const before = proxy.queries();

    const res = await fetchAgents({ Authorization: `Bearer ${await token()}`, 'Accept-Encoding': 'gzip' });

    const pages = proxy.queries() - before;
    expect(res.status).toBe(200);
    expect(res.ending).toBe('complete');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-length']).toBeUndefined();
    expect(pages).toBe(fullRead);
    expect(pages).toBeGreaterThanOrEqual(5);
    // The first page is read before the status line; the next is prefetched; the rest come later.
    expect(res.queriesAtFirstByte).toBeLessThanOrEqual(3);
    const listed = wholeInventory(res, gunzipSync(res.body).toString('utf8'));
    expect(listed).toEqual(byKey(listed));
  });

  it('sends a brotli stream, streamed the same way, to a client that names br beside gzip (equal q: br), decoding to the same inventory', async () => {
    failFrom = undefined;
    const before = proxy.queries();

    // What browsers and curl --compressed send: every coding at the same q-value.
    const res = await fetchAgents({ Authorization: `Bearer ${await token()}`, 'Accept-Encoding': 'gzip, deflate, br, zstd' });
    const gzip = await fetchAgents({ Authorization: `Bearer ${await token()}`, 'Accept-Encoding': 'gzip' });

    expect(res.status).toBe(200);
    expect(res.ending).toBe('complete');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers.vary).toBe('Accept-Encoding');
    // Page by page as gzip: the first bytes leave after the first page, with later pages unread.
    expect(res.queriesAtFirstByte).toBeLessThanOrEqual(3);
    expect(proxy.queries() - before).toBe(2 * fullRead);
    const ids = wholeInventory(res, brotliDecompressSync(res.body).toString('utf8'));
    // The same endpoints as gzip's answer (their states are evaluated at each request), in fewer bytes.
    expect(ids).toEqual(AgentInventory.parse(JSON.parse(gunzipSync(gzip.body).toString('utf8'))).map((a) => a.agent_id));
    expect(res.body.length).toBeLessThan(gzip.body.length);
  });

  it.each([
    ['a client that accepts only gzip', 'gzip, deflate', 'gzip', 'gzip'],
    ['a client that prefers gzip to br by q-value', 'br;q=0.5, gzip', 'gzip', 'gzip'],
    ['a client that accepts any coding without naming br', '*', 'gzip', 'gzip'],
    ['a client that accepts neither br nor gzip', 'deflate', 'plain JSON', undefined],
  ])('answers %s (Accept-Encoding: %s) with %s', async (_who, acceptEncoding, _what, coding) => {
    failFrom = undefined;

    // The coding is chosen before the first page is read: a tenant of one page shows it.
    const res = await fetchAgents({ Authorization: `Bearer ${await token('few')}`, 'Accept-Encoding': acceptEncoding });

    expect(res.status).toBe(200);
    expect(res.ending).toBe('complete');
    expect(res.headers['content-encoding']).toBe(coding);
    expect(JSON.parse((coding === 'gzip' ? gunzipSync(res.body) : res.body).toString('utf8'))).toHaveLength(FEW_AGENTS);
  });

  it('sends plain JSON, streamed the same way, to a client that does not accept gzip', async () => {
    failFrom = undefined;

    const res = await fetchAgents({ Authorization: `Bearer ${await token()}` });

    expect(res.status).toBe(200);
    expect(res.ending).toBe('complete');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.vary).toBe('Accept-Encoding');
    expect(res.queriesAtFirstByte).toBeLessThanOrEqual(3);
    expect(JSON.parse(res.body.toString('utf8'))).toHaveLength(AGENTS);
  });

  it.each([
    ['gzip', { 'Accept-Encoding': 'gzip' }],
    ['br', { 'Accept-Encoding': 'br' }],
    ['plain JSON', {}],
  ])(
    'breaks the %s transfer when the store fails after the first byte (fault injector), so the client never holds a shorter valid list',
    async (what, headers) => {
      failFrom = proxy.queries() + 4;

      const res = await fetchAgents({ Authorization: `Bearer ${await token()}`, ...headers });

      expect(res.status).toBe(200);
      expect(res.ending).toBe('broken');
      expect(res.body.length).toBeGreaterThan(0);
      const decode = { gzip: gunzipSync, br: brotliDecompressSync }[what] ?? ((bytes: Buffer) => bytes);
      expect(() => JSON.parse(decode(res.body).toString('utf8'))).toThrow();
    },
  );

  it('answers a store failing on the first page with the text/plain 503, never a 200', async () => {
    failFrom = proxy.queries() + 1;

    const res = await fetchAgents({ Authorization: `Bearer ${await token()}`, 'Accept-Encoding': 'gzip' });

    expect(res.status).toBe(503);
    expect(res.ending).toBe('complete');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.body.toString('utf8')).toMatch(
      /^The inventory store is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/,
    );
  });

  it('stops reading the store when the client hangs up', async () => {
    failFrom = undefined;
    const before = proxy.queries();

    const res = await fetchAgents({ Authorization: `Bearer ${await token()}`, 'Accept-Encoding': 'gzip' }, true);
    // A page in flight when the client left may still finish (and prefetch one more): wait until no
    // page has been asked for during two seconds, however slow a loaded machine makes that.
    let read = proxy.queries() - before;
    let quietFor = 0;
    for (let waited = 0; waited < 20_000 && quietFor < 2_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = proxy.queries() - before;
      quietFor = now === read ? quietFor + 250 : 0;
      read = now;
    }

    expect(res.status).toBe(200);
    expect(quietFor).toBeGreaterThanOrEqual(2_000); // the reads stopped
    expect(read).toBeLessThan(fullRead); // before the end of the tenant
  });
  it('serves a second request while the first holds its instance, from a second instance of the inventory', async () => {
    // Plain JSON (10 MB), its client reading nothing yet: the first instance streams it into the sockets.
    const headers = { Authorization: `Bearer ${await token()}` };
    const busy = () => stack.functions.stats('inventory').instances.filter((i) => i.state === 'busy');
    // An earlier test's instance may still be ending its cut stream on a loaded machine: start from rest.
    await expect.poll(() => busy().length, { timeout: 15_000 }).toBe(0);
    const first = await openAgents(headers);
    const holding = busy();
    const coldStarts = stack.functions.stats('inventory').coldStarts;

    const second = await fetchAgents(headers);
    const firstBody = await first.read();

    expect(holding).toHaveLength(1);
    expect(second.status).toBe(200);
    expect(second.ending).toBe('complete');
    expect(JSON.parse(second.body.toString('utf8'))).toHaveLength(AGENTS);
    // One event at a time per instance: with the first one busy, the second request had one started for it.
    expect(stack.functions.stats('inventory').coldStarts).toBe(coldStarts + 1);
    expect(stack.functions.stats('inventory').instances.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(firstBody.toString('utf8'))).toHaveLength(AGENTS);
  });
});
