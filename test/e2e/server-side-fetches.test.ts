import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { type ClientRequest, createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smallFleet } from '../fixtures/small-fleet.js';
import { gatedProxy } from '../helpers/faults.js';
import { call, connectTo } from '../helpers/mcp-client.js';
import { environmentOf } from '../helpers/sandbox.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { authorizeUrl, personInChromium, pkce } from '../helpers/sign-in.js';

/**
 * What a web page can make the local stack fetch on this machine: the sign-in fetches a client ID
 * metadata document in the authorization step, which any page can start (an `<img>` will do), and
 * every listener of the stack admits a program's request with the right `Host`. Pointed at a
 * function instance's Lambda Runtime API, that fetch once took the instance's next event while the
 * user's MCP call was in flight (a 502 for the user) and killed its runtime. Reproduced here as it
 * was found, in headless Chromium, against the running MCP function: the call in flight and the
 * next one succeed. The sign-in fetches nothing on this machine unless CLIENT_ID_DOCUMENT_DEV_ORIGINS
 * names the origin, so the Runtime API's origin is named here (as a developer's mistake, or a port
 * one happened to reuse, would name it): what stops the fetch is then the Runtime API's own refusal,
 * which the stack's fetch is seen to reach. Which addresses are fetched at all:
 * test/e2e/sign-in-hardening.test.ts and test/unit/client-id-documents.test.ts; the Runtime API's own
 * refusal of another program: test/integration/listener-guard.test.ts.
 */

let stack: SharedStack;
const person = personInChromium();

beforeAll(async () => {
  stack = await sharedStack(smallFleet());
});
afterAll(async () => {
  await person.close();
  await stack?.release();
});

const NEXT = '/2018-06-01/runtime/invocation/next';

/**
 * The status of each answer this process's HTTP clients (the stack's, in this process: the sign-in's
 * document fetch among them) got from `address` (host:port) for `path`, from now until `stop()`:
 * Node's own client channel, so a fetch that reached the listener is seen whatever became of it after.
 */
function answersFrom(address: string, path: string): { statuses: number[]; stop(): void } {
  const statuses: number[] = [];
  const onAnswer = (message: unknown): void => {
    const { request, response } = message as { request: ClientRequest; response: IncomingMessage };
    if (`${request.socket?.remoteAddress}:${request.socket?.remotePort}` === address && request.path === path)
      statuses.push(response.statusCode ?? 0);
  };
  subscribe('http.client.response.finish', onAnswer);
  return { statuses, stop: () => unsubscribe('http.client.response.finish', onAnswer) };
}

describe('E2E: a page of another origin sends the sign-in to fetch a Runtime API’s next event', () => {
  it('leaves the user’s MCP call in flight to succeed, and the next one too, when an <img> names the MCP instance’s /next as client_id', async () => {
    // The store answers the MCP function's reads when the test says: its instance is busy with the user's call meanwhile.
    const store = await gatedProxy(stack.dynamoEndpoint, (operation) => operation === 'Query');
    const before = stack.updateEnvironment({ DYNAMODB_ENDPOINT: store.endpoint });
    let devOriginsBefore: Record<string, string | undefined> = {};
    let fetched: ReturnType<typeof answersFrom> | undefined;
    let client: Client | undefined;
    const pages: Server = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(decodeURIComponent((req.url ?? '/').slice(1)));
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    const browser = await person.browser();
    const context = await browser.newContext();
    try {
      client = await connectTo(stack.publicUrl, await stack.mcpToken({ tenant: 'acme', subject: 'ada' }));
      const warm = await call(client, 'list_endpoints', { limit: 3 });
      store.shut();
      const inFlight = call(client, 'list_endpoints', { limit: 3 });
      // Awaited below, once the page has done its worst; a failure meanwhile is that await's.
      inFlight.catch(() => undefined);
      await expect.poll(() => store.held(), { timeout: 5_000 }).toBeGreaterThan(0);
      // The instance busy with the user's call, and its Runtime API's next event as a client ID.
      const busy = stack.functions.stats('mcp').instances.find((i) => i.state === 'busy');
      expect(busy).toBeDefined();
      const runtimeApi = environmentOf(busy!.pid).AWS_LAMBDA_RUNTIME_API ?? '';
      expect(runtimeApi).toMatch(/^127\.0\.0\.1:\d+$/);
      const next = `http://${runtimeApi}${NEXT}`;
      // A stack setting, read at each fetch: no function's environment holds it, so no instance is replaced.
      devOriginsBefore = stack.updateEnvironment({ CLIENT_ID_DOCUMENT_DEV_ORIGINS: new URL(next).origin });
      fetched = answersFrom(runtimeApi, NEXT);
      const authorize = authorizeUrl(stack.publicUrl, {
        clientId: next,
        redirectUri: 'http://127.0.0.1:1/cb',
        challenge: pkce().challenge,
      });
      const attack = `<!doctype html><title>Another site</title><img src="${authorize.href.replaceAll('&', '&amp;')}" onerror="document.title='loaded'" onload="document.title='loaded'">`;

      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${(pages.address() as AddressInfo).port}/${encodeURIComponent(attack)}`);
      await page.waitForFunction(() => (globalThis as unknown as { document: { title: string } }).document.title === 'loaded', undefined, {
        timeout: 10_000,
      });
      // The image's answer comes after the document's failure time, so the fetch is over: it reached the
      // Runtime API, which refused it (403) while its instance was still busy with the user's call.
      expect(fetched.statuses).toEqual([403]);
      expect(stack.functions.stats('mcp').instances.find((i) => i.pid === busy!.pid)?.state).toBe('busy');
      store.open();
      const answered = await inFlight;
      const after = await call(client, 'list_endpoints', { limit: 3 });

      expect(warm.isError).toBeFalsy();
      expect(store.held()).toBeGreaterThan(0);
      expect(answered.isError).toBeFalsy();
      expect(answered.structuredContent).toMatchObject({
        endpoints: [{ agent_id: 'ac-001' }, { agent_id: 'ac-002' }, { agent_id: 'ac-003' }],
      });
      expect(after.isError).toBeFalsy();
      // The instance that had the call in flight lives on: its runtime was not handed a refusal to die of.
      expect(busy).toBeDefined();
      expect(stack.functions.stats('mcp').instances.map((i) => i.pid)).toContain(busy?.pid);
    } finally {
      store.open();
      await client?.close();
      await context.close();
      fetched?.stop();
      stack.updateEnvironment({ ...before, ...devOriginsBefore });
      await store.close();
      await new Promise((resolve) => pages.close(resolve));
    }
  });
});
