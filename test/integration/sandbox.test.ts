import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayResponse } from '../../infra/gateway-responses.js';
import { LAMBDA_NODE_MAJOR } from '../../infra/node-version.js';
import { packagedLambdaNode } from '../../local/lambda/runtimes.js';
import type { Route } from '../../local/template-routes.js';
import { kernelQueuedBytes, openPaced } from '../helpers/paced-client.js';
import { FIXTURE_FUNCTIONS, type FixtureFunctions, type FixtureGateway, fixtureFunctions, fixtureGateway } from '../helpers/sandbox.js';

/**
 * The local Lambda sandboxes behind the local gateway, with fixture functions that fail on demand
 * (test/fixtures/functions/: a timeout, an allocation past the memory, a crash, a failed init, a
 * stream cut mid-way: faults the deployed functions give only by accident), each run as the stack
 * runs a deployed bundle. What is checked is what a client of API Gateway would see, what the stack
 * says about it, and that the next request is served by a fresh instance.
 */

const ROUTES: Route[] = [
  { api: 'public', method: 'GET', resource: '/call', function: 'observations', authorizer: null, transferMode: 'BUFFERED' },
  { api: 'public', method: 'GET', resource: '/stream', function: 'inventory', authorizer: null, transferMode: 'STREAM' },
  // The same function behind an integration timeout short enough to pass on purpose.
  { api: 'public', method: 'GET', resource: '/stream-briefly', function: 'inventory', authorizer: null, transferMode: 'STREAM' },
];

let functions: FixtureFunctions;
let gateway: FixtureGateway;
const coldStarts: Array<{ name: string; initDurationMs: number }> = [];

beforeAll(async () => {
  // serverless.yml's settings, with a timeout, memory and concurrency small enough to pass on purpose:
  // Lambda's least memory, and a timeout long enough for the fixture to fill it even on a loaded
  // machine (touching a page costs microseconds here; 100 MB, a good part of a second).
  functions = await fixtureFunctions({
    observations: { timeoutSeconds: 3, memorySizeMb: 128, reservedConcurrency: 2 },
  });
  gateway = await fixtureGateway(functions, {
    api: 'public',
    routes: ROUTES,
    integrationTimeoutMs: (route) => (route.resource === '/stream-briefly' ? 1_500 : 29_000),
    onColdStart: (_requestId, name, initDurationMs) => coldStarts.push({ name, initDurationMs }),
  });
});
afterAll(async () => {
  await gateway?.close();
  await functions?.stop();
});

interface Received {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** complete: the chunked body ended; broken: the connection was cut before its end. */
  ending: 'complete' | 'broken';
  ms: number;
}

/** A GET read to its end or to its cut, as curl reads it. */
function fetchRaw(path: string): Promise<Received> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${gateway.base}${path}`, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      const done = (ending: Received['ending']): void =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          ending,
          ms: performance.now() - started,
        });
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done('complete'));
      res.on('error', () => done('broken'));
      res.on('aborted', () => done('broken'));
    });
    req.on('error', reject);
    req.end();
  });
}

const json = (res: Received): Record<string, unknown> => JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;

/** The gateway response `type` as a client gets it: its status, text/plain, its sentence and the request id. */
function expectGatewayResponse(res: Received, type: Parameters<typeof gatewayResponse>[0], status = gatewayResponse(type).status): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(res.body.toString('utf8')).toMatch(
    new RegExp(`^${gatewayResponse(type).sentence.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(request id: [0-9a-f-]{36}\\)\\n$`),
  );
}

describe('Local sandbox: a function runs as Lambda runs it', () => {
  it("runs the bundle in a process of its own on Lambda's Node major, in its folder, with the variables Lambda sets and its remaining time", async () => {
    const res = await fetchRaw('/call?do=environment');
    const { pid, node, env, cwd, remainingMs, undici } = json(res) as {
      pid: number;
      node: string;
      env: Record<string, string>;
      cwd: string;
      remainingMs: number;
      undici: boolean;
    };

    expect(res.status).toBe(200);
    expect(pid).not.toBe(process.pid);
    // As Lambda's runtime, the runtime client loads no undici (fetch's client) for a handler that does not.
    expect(undici).toBe(false);
    // Where the optional package of Lambda's Node installed (Linux x64: these machines and CI); elsewhere the machine's.
    expect(node).toBe(packagedLambdaNode()?.version ?? process.versions.node);
    expect(Number.parseInt(node, 10)).toBe(packagedLambdaNode() ? LAMBDA_NODE_MAJOR : Number.parseInt(process.versions.node, 10));
    expect(cwd).toBe(join(FIXTURE_FUNCTIONS, 'observations'));
    expect(env).toMatchObject({
      _HANDLER: 'index.handler',
      LAMBDA_TASK_ROOT: join(FIXTURE_FUNCTIONS, 'observations'),
      AWS_LAMBDA_FUNCTION_NAME: 'endpoint-read-service-local-observations',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '128',
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/endpoint-read-service-local-observations',
      AWS_REGION: 'us-east-1',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    });
    expect(env.AWS_LAMBDA_RUNTIME_API).toMatch(/^127\.0\.0\.1:\d+$/);
    // Its timeout here is 3 s: the context counts down from it.
    expect(remainingMs).toBeGreaterThan(0);
    expect(remainingMs).toBeLessThanOrEqual(3_000);
  });

  it('reuses a warm instance for the next event, and reports the init time of a cold start', async () => {
    const before = functions.stats('observations').coldStarts;
    coldStarts.length = 0;

    const first = json(await fetchRaw('/call?do=sleep&ms=1'));
    const second = json(await fetchRaw('/call?do=sleep&ms=1'));

    expect(second.pid).toBe(first.pid);
    expect(functions.stats('observations').coldStarts).toBe(before);
    expect(coldStarts).toEqual([]);
  });

  it('starts an instance with the new variables when they change, and gives the warm instance back once they are put back; an older environment’s instance stops', async () => {
    const healthy = functions.environment('observations');
    const call = async () => json(await fetchRaw('/call?do=environment')) as { pid: number; env: Record<string, string> };
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const first = await call();

    functions.setEnvironment('observations', { ...healthy, FIXTURE_MARK: 'b' });
    const changed = await call();
    functions.setEnvironment('observations', { ...healthy });
    const back = await call();
    functions.setEnvironment('observations', { ...healthy, FIXTURE_MARK: 'c' });
    const third = await call();
    functions.setEnvironment('observations', healthy);
    const again = await call();

    expect(changed.pid).not.toBe(first.pid);
    expect(changed.env.FIXTURE_MARK).toBe('b');
    expect(back.pid).toBe(first.pid);
    expect(back.env.FIXTURE_MARK).toBeUndefined();
    expect(third.pid).not.toBe(changed.pid);
    expect(third.env.FIXTURE_MARK).toBe('c');
    expect(again.pid).toBe(first.pid);
    // Only the environment in force and the one before it keep instances: the instance of `b` is gone.
    await expect.poll(() => alive(changed.pid)).toBe(false);
    expect(alive(third.pid)).toBe(true);
  });

  it('runs two events at once in two instances, and answers one more than the reserved concurrency with the 500 of a throttled invocation', async () => {
    const [a, b, c] = await Promise.all([
      fetchRaw('/call?do=sleep&ms=600'),
      fetchRaw('/call?do=sleep&ms=600'),
      // Sent a moment later, while both instances (the reserved concurrency, 2) are busy.
      new Promise<Received>((resolve) => setTimeout(() => resolve(fetchRaw('/call?do=sleep&ms=1')), 200)),
    ]);

    expect([a.status, b.status]).toEqual([200, 200]);
    expect(json(a).pid).not.toBe(json(b).pid);
    expectGatewayResponse(c, 'DEFAULT_5XX', 500);
    expect(functions.said).toContain('observations: throttled, all 2 instances of its reserved concurrency are busy.');
    expect((await fetchRaw('/call?do=sleep&ms=1')).status).toBe(200);
  });

  it('writes what the function logs to the stack, named by the function', async () => {
    await fetchRaw('/call?do=log');

    expect(functions.logged).toContainEqual({ name: 'observations', line: expect.stringContaining('"message":"fixture says hello"') });
  });
});

describe('Local sandbox: a function that fails is answered as API Gateway answers it, and the next request gets a fresh instance', () => {
  it.each([
    ['runs past its timeout', 'hang', /^observations: Task timed out after 3\.00 seconds \(Sandbox\.Timedout\)/],
    [
      'holds more than its memorySize',
      'allocate',
      /^observations: Runtime exited with error: signal: killed \(memory \d+ MB over its memorySize of 128 MB\)/,
    ],
    ['crashes (its process exits)', 'exit', /^observations: Runtime exited with error: exit status 3 \(Runtime\.ExitError\)/],
  ])('answers a function that %s with the text/plain 502, says so, and serves the next request', async (_what, fault, said) => {
    const pids = (): number[] => functions.stats('observations').instances.map((i) => i.pid);
    await fetchRaw('/call?do=sleep&ms=1');
    const before = pids();
    functions.said.length = 0;

    const failed = await fetchRaw(`/call?do=${fault}`);
    const gone = before.filter((pid) => !pids().includes(pid));
    const next = await fetchRaw('/call?do=sleep&ms=1');

    expectGatewayResponse(failed, 'INTEGRATION_FAILURE');
    expect(functions.said).toEqual([expect.stringMatching(said)]);
    expect(gone).toHaveLength(1);
    expect(next.status).toBe(200);
    expect(gone).not.toContain(json(next).pid);
  });

  it('answers a function whose init fails with the text/plain 502 and says why, and starts it again once it can', async () => {
    functions.said.length = 0;
    const healthy = functions.environment('observations');
    functions.setEnvironment('observations', { ...healthy, FIXTURE_FAIL_INIT: 'true' });

    const failed = await fetchRaw('/call');
    functions.setEnvironment('observations', healthy);
    const next = await fetchRaw('/call?do=sleep&ms=1');

    expectGatewayResponse(failed, 'INTEGRATION_FAILURE');
    expect(functions.said).toEqual([
      'observations: init failed (Error: the fixture was told to fail its init); the next request starts a new instance.',
    ]);
    expect(next.status).toBe(200);
  });
  it("checks the init of the functions it is asked to check, and of those only (npm start's check of what the user gave them)", async () => {
    const healthy = functions.environment('observations');
    functions.setEnvironment('observations', { ...healthy, FIXTURE_FAIL_INIT: 'true' });
    try {
      const others = await functions.checkInits(['inventory', 'mcp']);
      const observations = await functions.checkInits(['observations', 'inventory']);

      expect(others).toEqual([]);
      expect(observations.map((c) => [c.name, c.error.errorMessage])).toEqual([['observations', 'the fixture was told to fail its init']]);
    } finally {
      functions.setEnvironment('observations', healthy);
    }
  });
});

describe('Local sandbox: a streamed answer', () => {
  it('reaches the client as the function writes it: the prelude as status and headers, the body chunked', async () => {
    const res = await fetchRaw('/stream?bytes=300000');

    expect(res.status).toBe(200);
    expect(res.ending).toBe('complete');
    expect(res.headers['x-fixture']).toBe('streamed');
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.body.length).toBe(300_000);
  });

  it.each([
    ['fails mid-stream (the runtime sends its error trailers)', 'throw-mid-stream'],
    ['crashes mid-stream (its process exits)', 'exit-mid-stream'],
  ])('is cut when the function %s, so no client takes it for a whole answer; the next one is whole', async (_what, fault) => {
    const cut = await fetchRaw(`/stream?bytes=4000000&do=${fault}`);
    const next = await fetchRaw('/stream?bytes=1000');

    expect(cut.status).toBe(200);
    expect(cut.ending).toBe('broken');
    expect(cut.body.length).toBeLessThan(4_000_000);
    expect([next.status, next.ending, next.body.length]).toEqual([200, 'complete', 1000]);
  });

  it('cuts a stream whose piped body fails, as AWS’s runtime client does (its response stream’s destroy is the request’s), and the stack goes on', async () => {
    const outcome = await functions.invoke(
      'inventory',
      { queryStringParameters: { bytes: '4000000', do: 'pipeline-fails-mid-stream' } },
      crypto.randomUUID(),
    );
    if (outcome.type !== 'stream') throw new Error(`expected a stream, got ${outcome.type}`);
    let bytes = 0;
    const read = (async () => {
      for await (const chunk of outcome.body as AsyncIterable<Buffer>) bytes += chunk.length;
    })();
    await expect(read).rejects.toThrow('aborted');

    expect(bytes).toBeLessThan(4_000_000);
    expect(await outcome.ended).toEqual({ errorType: 'Runtime.ExitError', errorMessage: 'the response stream was cut before its end' });
    const next = await fetchRaw('/stream?bytes=1000');
    expect([next.status, next.ending, next.body.length]).toEqual([200, 'complete', 1000]);
  });

  it('keeps the function writing for as long as a client reading 4 MB/s takes, less only what the kernel’s sockets hold', async () => {
    const size = 16 * 1024 * 1024;
    const answered = (): number => functions.stats('inventory').durationsMs.length;
    const before = answered();
    const client = await openPaced(`${gateway.base}/stream?bytes=${size}`);
    const started = performance.now();
    const reading = client.read(4 * 1024 * 1024);
    // The moment the function's answer is complete (its last byte has left it): what the client had
    // taken by then, and what the kernel held between the gateway and the client.
    let atEnd: { taken: number; queued: number; ms: number } | undefined;
    while (!atEnd) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (answered() > before) atEnd = { taken: client.taken(), queued: kernelQueuedBytes(client.socket), ms: performance.now() - started };
    }
    const body = await reading;
    const clientMs = performance.now() - started;

    expect(body.length).toBe(size);
    // All the rest was in the kernel's buffers (and Node's few small ones in between, at most 256 KiB):
    // nothing piled up in the stack's memory, so the function could only go as fast as its client.
    expect(size - atEnd.taken).toBeLessThanOrEqual(atEnd.queued + 256 * 1024);
    expect(atEnd.ms).toBeLessThan(clientMs);
  });

  it('answers a streaming function that fails before its first byte with the text/plain 502', async () => {
    expectGatewayResponse(await fetchRaw('/stream?do=throw-first'), 'INTEGRATION_FAILURE');
  });

  it('answers 504 when the stream has not come within the integration timeout', async () => {
    const res = await fetchRaw('/stream-briefly?do=hang');

    expectGatewayResponse(res, 'INTEGRATION_TIMEOUT');
    expect(res.ms).toBeGreaterThanOrEqual(1_400);
  });
});
