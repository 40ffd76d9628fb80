import { spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { durableAgentKey } from '../../lib/data-format/keys.js';
import { type EmbeddedEngine, startEmbeddedEngine } from '../../local/engine.js';
import { guarded, NO_PAGES } from '../../local/guard.js';
import { connectionHeldBy } from '../../local/lambda/runtime-api.js';
import { ensureTables } from '../../local/tables.js';
import type { Route } from '../../local/template-routes.js';
import { launchChromium } from '../helpers/browser.js';
import { documentClient, uniqueTables } from '../helpers/engine.js';
import { environmentOf, type FixtureFunctions, type FixtureGateway, fixtureFunctions, fixtureGateway } from '../helpers/sandbox.js';

/**
 * The listeners the local stack starts beside its gateways, closed to the web by the one guard
 * (local/guard.ts): the embedded DynamoDB engine (dynalite, which by itself answers any Host,
 * any signature, and every origin with `Access-Control-Allow-Origin: *`) and a function instance's
 * Lambda Runtime API (whose events carry the callers' bearer tokens), each tried from another
 * Host, from a page's Origin, and from a page of another origin in headless Chromium; and the
 * Runtime API answering its own instance's runtime only (another program on this machine refused,
 * whether the runtime waits or is busy), one request at a time. Each refusal is shown to change
 * nothing: the engine's data and the instance's next event are as they were. The engine is always the embedded one here (the
 * guard is for listeners the stack starts; DynamoDB Local is not one). The gateways and the
 * authorization server: test/e2e/sign-in-hardening.test.ts.
 */

const FOREIGN = 'https://evil.example';
const TENANT = 'acme';
const AGENT = 'a-guarded';

let engine: EmbeddedEngine;
const tables = uniqueTables();
let db: ReturnType<typeof documentClient>;
let functions: FixtureFunctions;
let gateway: FixtureGateway;

const ROUTES: Route[] = [
  { api: 'public', method: 'GET', resource: '/call', function: 'observations', authorizer: null, transferMode: 'BUFFERED' },
];

beforeAll(async () => {
  engine = await startEmbeddedEngine({ port: 0 });
  db = documentClient(engine.endpoint);
  await ensureTables(db, tables);
  await db.send(
    new PutCommand({ TableName: tables.dataTable, Item: { ...durableAgentKey(TENANT, AGENT), agent_id: AGENT, hostname: 'kept' } }),
  );
  // One instance, so the one that answers is the one whose Runtime API was tried.
  functions = await fixtureFunctions({ observations: { reservedConcurrency: 1 } });
  gateway = await fixtureGateway(functions, { api: 'public', routes: ROUTES });
});
afterAll(async () => {
  await gateway?.close();
  await functions?.stop();
  db?.destroy();
  await engine?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with the headers the test chooses (Host included); status 0 when nothing came back within `waitMs`. */
function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  waitMs = 3_000,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers ?? {}, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.setTimeout(waitMs, () => {
      req.destroy();
      resolve({ status: 0, headers: {}, body: '' });
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end(init.body);
  });
}

/** What dynalite takes for a signed DynamoDB call: any signature will do, which is why the guard is in front of it. */
function dynamoCall(target: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  return raw(engine.endpoint, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': `DynamoDB_20120810.${target}`,
      'X-Amz-Date': '20260101T000000Z',
      Authorization: 'AWS4-HMAC-SHA256 Credential=made-up/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const ownEngineHost = (): string => new URL(engine.endpoint).host;

/** Whether the item a refused PutItem would have written is there. */
async function written(agentId: string): Promise<boolean> {
  const { Item } = await db.send(new GetCommand({ TableName: tables.dataTable, Key: durableAgentKey(TENANT, agentId) }));
  return Item !== undefined;
}

const HOST_REFUSAL =
  /^This local service answers only requests addressed to it by its own name \(Host: localhost:\d+\); this one names another host\.\n$/;
const PAGE_REFUSAL = 'This local service answers no web page, and this request comes from one (it carries Origin or Sec-Fetch-Site).\n';
const OWN_RUNTIME_ONLY = "This Runtime API answers its own instance's runtime only.\n";

function expectRefused(res: Answer, sentence: RegExp | string, status = 403): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(res.headers['access-control-allow-origin']).toBeUndefined();
  if (typeof sentence === 'string') expect(res.body).toBe(sentence);
  else expect(res.body).toMatch(sentence);
}

describe('Integration: the embedded DynamoDB engine answers its own name and no web page', () => {
  it('answers the AWS SDK at its own address, as the stack, its functions and the CLIs reach it', async () => {
    const { Item } = await db.send(new GetCommand({ TableName: tables.dataTable, Key: durableAgentKey(TENANT, AGENT) }));

    expect(Item).toMatchObject({ agent_id: AGENT, hostname: 'kept' });
  });

  it('refuses a Scan with a made-up signature under another Host, with one text/plain sentence and no data', async () => {
    const res = await dynamoCall('Scan', { TableName: tables.dataTable }, { Host: 'evil.example', Origin: FOREIGN });

    expectRefused(res, HOST_REFUSAL);
    expect(res.body).not.toContain('kept');
  });

  it.each([
    ['another site', FOREIGN],
    ['an opaque origin', 'null'],
    ['a page of this machine', 'http://localhost:3000'],
  ])('refuses a Scan and a PutItem from a page of %s under its own Host, and writes nothing', async (_what, origin) => {
    const agentId = `a-${origin.length}-${Math.random().toString(36).slice(2)}`;
    const scan = await dynamoCall('Scan', { TableName: tables.dataTable }, { Host: ownEngineHost(), Origin: origin });
    const put = await dynamoCall(
      'PutItem',
      {
        TableName: tables.dataTable,
        Item: { pk: { S: durableAgentKey(TENANT, agentId).pk }, sk: { S: durableAgentKey(TENANT, agentId).sk } },
      },
      { Host: ownEngineHost(), Origin: origin },
    );

    expectRefused(scan, PAGE_REFUSAL);
    expectRefused(put, PAGE_REFUSAL);
    expect(await written(agentId)).toBe(false);
  });

  it('answers no preflight: no Access-Control-Allow-Origin, none of the requested headers echoed', async () => {
    const res = await raw(engine.endpoint, {
      method: 'OPTIONS',
      headers: {
        Host: ownEngineHost(),
        Origin: FOREIGN,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'x-amz-target, authorization, x-anything',
      },
    });

    expectRefused(res, PAGE_REFUSAL);
    expect(res.headers['access-control-allow-headers']).toBeUndefined();
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('refuses what a browser marks as its own without an Origin (a no-cors GET carries Sec-Fetch-Site only)', async () => {
    const res = await raw(engine.endpoint, {
      headers: { Host: ownEngineHost(), 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors' },
    });

    expectRefused(res, PAGE_REFUSAL);
  });
});

/**
 * The Runtime API of the one warm observations instance (its AWS_LAMBDA_RUNTIME_API) and that
 * instance's pid, once its runtime is back waiting for the next event (it asks right after its
 * answer, which on a loaded machine may come after the answer reached the test).
 */
async function warmInstance(): Promise<{ runtimeApi: string; pid: number }> {
  const res = await raw(`${gateway.base}/call?do=environment`);
  const { env, pid } = JSON.parse(res.body) as { env: Record<string, string>; pid: number };
  const waiting = (): boolean => functions.stats('observations').instances.some((i) => i.pid === pid && i.state === 'idle');
  for (let tries = 0; tries < 500 && !waiting(); tries += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!waiting()) throw new Error('the instance’s runtime did not ask for its next event within 5 s');
  return { runtimeApi: `http://${env.AWS_LAMBDA_RUNTIME_API}`, pid };
}

/** The next event, served: by the same instance when nothing took its event away. */
async function nextCall(): Promise<{ status: number; pid: number | undefined }> {
  const res = await raw(`${gateway.base}/call?do=sleep&ms=1`);
  return { status: res.status, pid: res.status === 200 ? (JSON.parse(res.body) as { pid: number }).pid : undefined };
}

const NEXT = '/2018-06-01/runtime/invocation/next';

/** What the page's XMLHttpRequest offers, as far as the test uses it. */
interface PageXhr {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body: string): void;
  onload: () => void;
  onerror: () => void;
  status: number;
}

describe("Integration: a function instance's Lambda Runtime API answers its own runtime only", () => {
  it.each([
    ['under another Host', (own: string) => ({ Host: `evil.example:${new URL(own).port}` }), HOST_REFUSAL],
    ['from a page’s Origin', (own: string) => ({ Host: new URL(own).host, Origin: FOREIGN }), PAGE_REFUSAL],
    ['marked by a browser as its own', (own: string) => ({ Host: new URL(own).host, 'Sec-Fetch-Site': 'cross-site' }), PAGE_REFUSAL],
  ])('refuses GET /next %s at once, and the instance’s own runtime gets the next event', async (_what, headers, sentence) => {
    const { runtimeApi, pid } = await warmInstance();

    const stolen = await raw(`${runtimeApi}${NEXT}`, { headers: headers(runtimeApi) });
    const next = await nextCall();

    expectRefused(stolen, sentence);
    expect(next).toEqual({ status: 200, pid });
  });

  it('refuses GET /next from any other program on this machine while its runtime waits (403, one sentence), and the event goes to its runtime', async () => {
    const { runtimeApi, pid } = await warmInstance();

    const stolen = await raw(`${runtimeApi}${NEXT}`, { headers: { Host: new URL(runtimeApi).host } });
    const next = await nextCall();

    expectRefused(stolen, OWN_RUNTIME_ONLY);
    expect(next).toEqual({ status: 200, pid });
  });

  it('refuses GET /next from another program while its runtime is busy with an event (as a server of the stack made to fetch it would ask), and that event is answered', async () => {
    const { runtimeApi, pid } = await warmInstance();

    const inFlight = raw(`${gateway.base}/call?do=sleep&ms=1500`);
    // Busy: the event handed to its runtime, which is not asking for the next one.
    await expect
      .poll(() => functions.stats('observations').instances.find((i) => i.pid === pid)?.state, { timeout: 5_000, interval: 10 })
      .toBe('busy');
    const stolen = await raw(`${runtimeApi}${NEXT}`, { headers: { Host: new URL(runtimeApi).host } });
    const answered = await inFlight;
    const next = await nextCall();

    expectRefused(stolen, OWN_RUNTIME_ONLY);
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body)).toEqual({ pid });
    expect(next).toEqual({ status: 200, pid });
  });

  it('refuses a second GET /next from its own runtime (its token) while one waits (409, one sentence), and the event goes to the call that asked first', async () => {
    const { runtimeApi, pid } = await warmInstance();
    // The token its runtime client was started with (the kernel keeps the environment a process began with).
    const token = environmentOf(pid).LAMBDA_RUNTIME_LOCAL_TOKEN ?? '';

    const second = await raw(`${runtimeApi}${NEXT}`, { headers: { Host: new URL(runtimeApi).host, 'Lambda-Runtime-Local-Token': token } });
    const next = await nextCall();

    expect(token).not.toBe('');
    expectRefused(
      second,
      'This Runtime API already has a runtime waiting for the next event; an instance asks for one event at a time.\n',
      409,
    );
    expect(next).toEqual({ status: 200, pid });
  });

  it('keeps the token out of the function’s environment (the runtime client holds it; the handler sees Lambda’s variables)', async () => {
    const res = await raw(`${gateway.base}/call?do=environment`);
    const { env } = JSON.parse(res.body) as { env: Record<string, string> };

    expect(env.AWS_LAMBDA_RUNTIME_API).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(env.LAMBDA_RUNTIME_LOCAL_TOKEN).toBeUndefined();
  });

  it('refuses an answer posted from a page before reading it', async () => {
    const { runtimeApi } = await warmInstance();

    const forged = await raw(`${runtimeApi}/2018-06-01/runtime/invocation/any/response`, {
      method: 'POST',
      headers: { Host: new URL(runtimeApi).host, Origin: FOREIGN, 'Content-Type': 'text/plain' },
      body: '{"statusCode":200,"body":"forged"}',
    });

    expectRefused(forged, PAGE_REFUSAL);
  });
});

describe("Integration: a Runtime API knows AWS's runtime client by the process that holds its connection (Linux)", () => {
  it('takes a connection held by the instance’s process for its runtime’s, and one of any other process for none', async () => {
    const connections: Socket[] = [];
    const server = createNetServer((socket) => connections.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // A process that connects and holds its connection, as a runtime holds its loop's.
    const child = spawn(process.execPath, ['-e', `require('node:net').connect(${port}, '127.0.0.1'); setInterval(() => {}, 1000);`]);
    try {
      await expect.poll(() => connections.length, { timeout: 5_000, interval: 10 }).toBe(1);
      const ours = connect(port, '127.0.0.1');
      await expect.poll(() => connections.length, { timeout: 5_000, interval: 10 }).toBe(2);
      const [fromChild, fromTest] = connections as [Socket, Socket];

      expect(connectionHeldBy(child.pid ?? 0, fromChild)).toBe(true);
      expect(connectionHeldBy(child.pid ?? 0, fromTest)).toBe(false);
      expect(connectionHeldBy(process.pid, fromTest)).toBe(true);
      ours.destroy();
    } finally {
      child.kill();
      for (const socket of connections) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('Integration: a page of another origin in a browser reaches neither the engine nor a Runtime API', () => {
  let browser: Browser;
  let page: Page;
  let pages: Server;

  beforeAll(async () => {
    // The page's own origin: another port of this machine, as a page of any site reaches loopback.
    pages = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html><head><meta charset="utf-8"><title>Another origin</title></head><body>elsewhere</body></html>');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(pages.address() as AddressInfo).port}/`);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => pages?.close(resolve));
  });

  it('can neither read (fetch) nor write (XHR) the engine’s tables: the preflight is refused', async () => {
    const victim = `a-page-${Date.now()}`;
    const outcome = await page.evaluate(
      async ({ endpoint, table, key }) => {
        const headers = {
          'Content-Type': 'application/x-amz-json-1.0',
          'X-Amz-Date': '20260101T000000Z',
          Authorization: 'AWS4-HMAC-SHA256 Credential=made-up/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
        };
        const scan = await fetch(endpoint, {
          method: 'POST',
          headers: { ...headers, 'X-Amz-Target': 'DynamoDB_20120810.Scan' },
          body: JSON.stringify({ TableName: table }),
        }).then(
          async (res) => `read ${res.status}: ${await res.text()}`,
          () => 'refused',
        );
        // The page's XMLHttpRequest (this project's types have no DOM).
        const Xhr = (globalThis as unknown as { XMLHttpRequest: new () => PageXhr }).XMLHttpRequest;
        const put = await new Promise<string>((resolve) => {
          const xhr = new Xhr();
          xhr.open('POST', endpoint);
          for (const [name, value] of Object.entries({ ...headers, 'X-Amz-Target': 'DynamoDB_20120810.PutItem' }))
            xhr.setRequestHeader(name, value);
          xhr.onload = () => resolve(`written ${xhr.status}`);
          xhr.onerror = () => resolve('refused');
          xhr.send(JSON.stringify({ TableName: table, Item: { pk: { S: key.pk }, sk: { S: key.sk } } }));
        });
        return { scan, put };
      },
      { endpoint: engine.endpoint, table: tables.dataTable, key: durableAgentKey(TENANT, victim) },
    );

    expect(outcome).toEqual({ scan: 'refused', put: 'refused' });
    expect(await written(victim)).toBe(false);
  });

  it('cannot take an instance’s next event, by fetch or by a no-cors request the page cannot read', async () => {
    const { runtimeApi, pid } = await warmInstance();

    const outcome = await page.evaluate(async (url) => {
      const read = await fetch(url).then(
        async (res) => `read ${res.status}: ${await res.text()}`,
        () => 'refused',
      );
      // A no-cors GET carries no Origin; the page never sees its answer, but it would take the event
      // all the same. Its answer (opaque to the page) is waited for, so it reached the API before the call below.
      const blind = await Promise.race([
        fetch(url, { mode: 'no-cors' }).then(
          () => 'answered',
          () => 'answered',
        ),
        new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
      ]);
      return { read, blind };
    }, `${runtimeApi}${NEXT}`);
    const next = await nextCall();

    expect(outcome).toEqual({ read: 'refused', blind: 'answered' });
    expect(next).toEqual({ status: 200, pid });
  });
});

describe('Integration: the guard in front of a listener', () => {
  it('keeps Access-Control-Allow-Origin: * out of an answer however the handler behind it writes it', async () => {
    const server = createServer(
      guarded(NO_PAGES, (req, res) => {
        if (req.url === '/set') res.setHeader('Access-Control-Allow-Origin', '*');
        if (req.url === '/object') res.writeHead(200, { 'access-control-allow-origin': ' * ', 'X-Kept': 'yes' });
        if (req.url === '/list') res.writeHead(200, ['Access-Control-Allow-Origin', '*', 'X-Kept', 'yes']);
        res.end('ok');
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const answers = await Promise.all(['/set', '/object', '/list'].map((path) => raw(`${base}${path}`)));

      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
      }
      expect(answers.slice(1).map((res) => res.headers['x-kept'])).toEqual(['yes', 'yes']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
