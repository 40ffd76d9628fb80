import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smallFleet } from '../fixtures/small-fleet.js';
import { launchChromium } from '../helpers/browser.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';

/**
 * A browser-based MCP client, for real: the official SDK client bundled for the browser, in a page
 * served from an origin listed in MCP_ALLOWED_ORIGINS, calling the door of the local stack from
 * headless Chromium (test/helpers/browser.ts finds it; driven by playwright-core). The browser itself enforces CORS: the
 * preflight, the allowed headers, the readable answer. The same page from another origin must fail.
 */

/** The page's script: the SDK client, both protocol eras, a token given by the test. */
const PAGE_SCRIPT = `
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
window.runMcp = async (url, token, modern) => {
  const client = new Client({ name: 'browser-page', version: '1.0.0' }, modern ? { versionNegotiation: { mode: 'auto' } } : undefined);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer ' + token } } }));
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    const call = await client.callTool({ name: 'list_endpoints', arguments: { limit: 2 } });
    return { protocol: client.getNegotiatedProtocolVersion(), tools, isError: call.isError === true, endpoints: call.structuredContent.endpoints.length };
  } finally {
    await client.close();
  }
};
// What a browser-based client does first: a call without a token, then the 401's challenge read
// to find where to sign in. \`simple\`: a CORS-safelisted request (no preflight), so only the 401's
// own headers decide whether the page may read it; otherwise as the SDK sends it (preflighted).
window.readChallenge = async (url, simple) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const headers = simple ? { 'Content-Type': 'text/plain' } : { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-11-25' };
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.text() };
};
window.pageReady = true;
`;

async function pageServer(script: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/client.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' });
      res.end(script);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><html><head><meta charset="utf-8"><title>MCP page</title><script src="/client.js"></script></head><body>MCP browser client</body></html>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let stack: SharedStack;
let admitted: { server: Server; origin: string };
let foreign: { server: Server; origin: string };
let browser: Browser;
/** One page per origin, its script loaded once: each test's calls are requests of their own, judged by the browser's CORS rules each time. */
const pages = new Map<string, Page>();

beforeAll(async () => {
  const bundle = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    minify: true,
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.text;
  admitted = await pageServer(script);
  foreign = await pageServer(script);
  stack = await sharedStack(smallFleet(), { MCP_ALLOWED_ORIGINS: `https://inspector.example, ${admitted.origin}` });
  browser = await launchChromium();
  const context = await browser.newContext();
  for (const { origin } of [admitted, foreign]) {
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (globalThis as unknown as { pageReady?: boolean }).pageReady === true);
    pages.set(origin, page);
  }
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stack?.release();
  for (const page of [admitted, foreign]) if (page) await new Promise((resolve) => page.server.close(resolve));
});

async function runInPage(
  origin: string,
  modern: boolean,
): Promise<{ protocol: string; tools: string[]; isError: boolean; endpoints: number }> {
  const token = await stack.mcpToken({ tenant: 'acme', subject: 'browser-user' });
  return pages
    .get(origin)!
    .evaluate(
      ([url, bearer, era]) =>
        (globalThis as unknown as { runMcp: (u: string, t: string, m: boolean) => Promise<never> }).runMcp(url, bearer, era),
      [`${stack.publicUrl}/api/mcp`, token, modern] as const,
    );
}

async function challengeInPage(origin: string, simple: boolean): Promise<{ status: number; challenge: string | null; body: string }> {
  return pages
    .get(origin)!
    .evaluate(
      ([url, plain]) => (globalThis as unknown as { readChallenge: (u: string, s: boolean) => Promise<never> }).readChallenge(url, plain),
      [`${stack.publicUrl}/api/mcp`, simple] as const,
    );
}

describe('E2E: a browser page calls the MCP door across origins (headless Chromium)', () => {
  it.each([
    ['a simple request', true],
    ['the request an MCP client sends (preflighted)', false],
  ])("reads the gateway's 401 and its challenge from an admitted origin without a token (%s)", async (_kind, simple) => {
    const result = await challengeInPage(admitted.origin, simple);

    expect(result.status).toBe(401);
    expect(result.challenge).toBe(
      `Bearer resource_metadata="${stack.publicUrl}/.well-known/oauth-protected-resource/api/mcp", scope="endpoints:read"`,
    );
    expect(result.body).toMatch(/^A valid bearer token issued for this MCP server is required; .* \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it("cannot read the gateway's 401 from an origin that is not admitted", async () => {
    await expect(challengeInPage(foreign.origin, true)).rejects.toThrow(/Failed to fetch|NetworkError|CORS/i);
  });

  it.each([
    ['2025-11-25', false],
    ['2026-07-28', true],
  ])('lists the tools and calls one from an admitted origin (protocol %s)', async (protocol, modern) => {
    const result = await runInPage(admitted.origin, modern);

    expect(result).toEqual({ protocol, tools: ['list_endpoints', 'observations'], isError: false, endpoints: 2 });
  });

  it('fails from an origin that is not admitted: the browser gets no CORS answer it may read', async () => {
    await expect(runInPage(foreign.origin, false)).rejects.toThrow(/Failed to fetch|NetworkError|CORS/i);
  });
});
