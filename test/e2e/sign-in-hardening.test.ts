import { lookup } from 'node:dns/promises';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { hostname } from 'node:os';
import ipaddr from 'ipaddr.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentRefused } from '../../local/client-id-documents.js';
import { closedPortEndpoint, silentEndpoint } from '../helpers/faults.js';
import { authorizeUrl, personInChromium, pkce, registerClient, registerPublicClient } from '../helpers/sign-in.js';
import { DOCUMENT_FAILURE_MS, startTestStack, type TestStack } from '../helpers/stack.js';

/**
 * The local stack closed to the network, each finding of its security review reproduced and shown
 * refused: DNS rebinding (a request naming another host), a sign-in form posted from another page
 * (pages of another origin and of an opaque one in Chromium, whose own page's form is pressed there too),
 * a page of another origin (refused by the listener's guard, changing nothing), client ID
 * metadata documents as a port scanner (a token request naming a URL on this machine, https on a
 * loopback name, a failure's time), `Access-Control-Allow-Origin: *`, an invalid authorization
 * request sent to the redirect URI (open redirector, whatever the redirect URI carries), and
 * registrations a browser page could make or that name a browser-internal scheme.
 * MCP_ALLOWED_ORIGINS=* refused at start: test/e2e/start.test.ts. The engine and the Runtime APIs:
 * test/integration/listener-guard.test.ts. A stack of its own: the authorization server takes
 * MCP_ALLOWED_ORIGINS when it starts.
 */

/** The sentence of every document failure, with the test stacks' fixed time. */
const DOCUMENT_REFUSED = documentRefused(DOCUMENT_FAILURE_MS);

const ADMITTED = 'https://app.example';
const FOREIGN = 'https://evil.example';
const REDIRECT = 'http://127.0.0.1:45998/callback';

let stack: TestStack;
const person = personInChromium();
beforeAll(async () => {
  stack = await startTestStack('none', { MCP_ALLOWED_ORIGINS: ADMITTED });
});
afterAll(async () => {
  await person.close();
  await stack?.stop();
  delete process.env.MCP_ALLOWED_ORIGINS;
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to a listener with the Host header the test chooses (fetch sets its own). */
function raw(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const port = (): string => new URL(stack.publicUrl).port;

const register = (metadata: Record<string, unknown>, contentType = 'application/json'): Promise<Response> =>
  registerClient(stack.publicUrl, metadata, contentType);

const publicClient = (): Promise<string> => registerPublicClient(stack.publicUrl, REDIRECT);

const authorizationUrl = (clientId: string, params: Record<string, string> = {}): URL =>
  authorizeUrl(stack.publicUrl, { clientId, redirectUri: REDIRECT, challenge: pkce().challenge }, { state: 's', ...params });

/** A listener on this machine that counts the requests it gets (what an SSRF would reach). */
async function countingListener(status = 200): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server: Server = createServer((_req, res) => {
    count += 1;
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end('{"secret":"internal detail"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/client.json`,
    count: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('E2E: the local stack answers only its own name (DNS rebinding, tunnels)', () => {
  it('listens on 127.0.0.1 by default, this machine only', () => {
    expect(stack.publicAddress).toBe('127.0.0.1');
  });

  it('refuses POST /api/mcp with a valid token but Host: evil.example.com with 403, running nothing behind it', async () => {
    const token = await stack.mcpToken();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

    const foreign = await raw(stack.publicUrl, '/api/mcp', {
      method: 'POST',
      headers: { ...headers, Host: `evil.example.com:${port()}` },
      body,
    });
    const own = await raw(stack.publicUrl, '/api/mcp', { method: 'POST', headers: { ...headers, Host: `127.0.0.1:${port()}` }, body });

    expect(foreign.status).toBe(403);
    expect(foreign.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(foreign.body).toMatch(
      /^This local service answers only requests addressed to it by its own name \(Host: localhost:\d+\); this one names another host\. \(request id: /,
    );
    expect(own.status).toBe(200);
  });

  it.each([
    ['the sign-in page', 'GET', '/oauth2/authorize?client_id=x'],
    ['registration', 'POST', '/oauth2/register'],
    ['the token endpoint', 'POST', '/oauth2/token'],
    ['the authorization server metadata', 'GET', '/.well-known/oauth-authorization-server'],
    ['the inventory', 'GET', '/api/agents'],
  ])('refuses %s under another Host, issuing nothing', async (_what, method, path) => {
    const res = await raw(stack.publicUrl, path, {
      method,
      headers: { Host: `rebound.example:${port()}`, 'Content-Type': 'application/json' },
      body: method === 'POST' ? JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }) : undefined,
    });

    expect(res.status).toBe(403);
    expect(res.body).not.toMatch(/client_id|access_token|<form/);
  });

  it('refuses the private listener under another Host, and answers each loopback name of the public one', async () => {
    const foreign = await raw(stack.privateUrl, '/api/mcp/endpoint?agent_id=a', { headers: { Host: 'evil.example.com' } });
    const names = await Promise.all(
      ['localhost', '127.0.0.1', '[::1]'].map((name) =>
        raw(stack.publicUrl, '/.well-known/oauth-authorization-server', { headers: { Host: `${name}:${port()}` } }),
      ),
    );

    expect(foreign.status).toBe(403);
    expect(names.map((n) => n.status)).toEqual([200, 200, 200]);
  });
});

/** A listener on this machine that records the headers of each request it gets (a client's redirect URI, a page of another origin). */
async function recordingListener(page = ''): Promise<{ url: string; requests: IncomingHttpHeaders[]; close: () => Promise<void> }> {
  const requests: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.headers);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('E2E: the sign-in form, pressed in a browser and posted from other pages', () => {
  it('sends the person who presses it on its own page back to the client, and the sign-in page’s address to no other origin', async () => {
    const client = await recordingListener('<!doctype html><title>Client</title><p>Signed in.</p>');
    try {
      const redirectUri = `${client.url}/callback`;
      const clientId = await registerPublicClient(stack.publicUrl, redirectUri);

      const back = await person.signIn(authorizeUrl(stack.publicUrl, { clientId, redirectUri, challenge: pkce().challenge }), {
        tenant: 'acme',
        user: 'pia',
      });

      expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
      expect(back.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      // The referrer policy is same-origin: the redirect URI learns nothing of the sign-in page's URL.
      expect(client.requests).toHaveLength(1);
      expect(client.requests[0]?.referer).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('is refused from a page of another origin and from an opaque origin (Origin: null) in Chromium, and from a program without Origin; the sign-in it names is left for its own page', async () => {
    const browser = await person.browser();
    const context = await browser.newContext();
    const pages: Array<{ close: () => Promise<void> }> = [];
    try {
      // The person's own sign-in, in progress: its page and its form's address.
      const own = await context.newPage();
      await own.goto(authorizationUrl(await publicClient()).href);
      const action = new URL((await own.getAttribute('form', 'action')) ?? '', own.url()).href;
      const forged = `<!doctype html><title>Another site</title><form method="post" action="${action}"><input name="tenant" value="globex"><input name="user" value="attacker"><input name="groups" value="*"><input name="action" value="allow"></form><script>document.forms[0].submit()</script>`;
      const foreign = await recordingListener(forged);
      pages.push(foreign);
      // The same page served in a sandbox: its origin is opaque, so the browser posts its form with Origin: null.
      const opaque = createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': 'sandbox allow-forms allow-scripts' });
        res.end(forged);
      });
      await new Promise<void>((resolve) => opaque.listen(0, '127.0.0.1', resolve));
      pages.push({ close: () => new Promise((resolve) => opaque.close(() => resolve())) });
      const posted = async (url: string): Promise<{ origin: string | null; status: number; text: string }> => {
        const page = await context.newPage();
        const answer = page.waitForResponse((response) => response.url() === action && response.request().method() === 'POST');
        await page.goto(url);
        const response = await answer;
        await page.waitForLoadState('load');
        return {
          origin: await response.request().headerValue('origin'),
          status: response.status(),
          text: (await page.textContent('body')) ?? '',
        };
      };

      const fromForeign = await posted(`${foreign.url}/`);
      const fromOpaque = await posted(`http://127.0.0.1:${(opaque.address() as AddressInfo).port}/`);
      const fromProgram = await fetch(action, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ tenant: 'globex', user: 'attacker', groups: '*', action: 'allow' }),
        redirect: 'manual',
      });
      // Nobody listens on this client's redirect URI: where the browser goes is what tells.
      const backToClient = own.waitForRequest((request) => request.url().startsWith(REDIRECT));
      await own.click('button[value="allow"]');
      const back = (await backToClient).url();

      // Another origin, and an origin the browser will not name, are refused by the listener's guard before the form is read; no Origin, by the form itself.
      expect([fromForeign.origin, fromOpaque.origin]).toEqual([foreign.url, 'null']);
      for (const refused of [fromForeign, fromOpaque]) {
        expect(refused.status).toBe(403);
        expect(refused.text).toMatch(/^This local service answers web pages of its own origin \(http:\/\/localhost:\d+\)/);
      }
      expect(fromProgram.status).toBe(403);
      expect(fromProgram.headers.get('location')).toBeNull();
      expect(await fromProgram.text()).toMatch(/^The sign-in form is accepted only from the sign-in page of this server/);
      expect(back).toMatch(new RegExp(`^${REDIRECT}\\?code=`));
    } finally {
      await context.close();
      for (const page of pages) await page.close();
    }
  });
});

/** A client with refresh tokens, signed in through the page, and its first tokens. */
async function signedInClient(): Promise<{ clientId: string; refreshToken: string }> {
  const res = await register({
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
  });
  const clientId = ((await res.json()) as { client_id: string }).client_id;
  const { verifier, challenge } = pkce();
  const back = await person.signIn(authorizationUrl(clientId, { code_challenge: challenge }), { tenant: 'acme', user: 'ida' });
  const tokens = await fetch(`${stack.publicUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    }),
  });
  return { clientId, refreshToken: ((await tokens.json()) as { refresh_token: string }).refresh_token };
}

describe('E2E: a page of another origin at the local listeners', () => {
  const GUARD =
    /^This local service answers web pages of its own origin \(http:\/\/localhost:\d+\) and MCP_ALLOWED_ORIGINS only; this request comes from another origin\. \(request id: [0-9a-f-]{36}\)\n$/;

  it('refuses a registration from another origin with the one text/plain sentence of the guard (before the authorization server sees it), and takes an admitted one', async () => {
    const body = JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
    const foreign = await raw(stack.publicUrl, '/oauth2/register', {
      method: 'POST',
      headers: { Host: `localhost:${port()}`, Origin: FOREIGN, 'Content-Type': 'application/json' },
      body,
    });
    const admitted = await raw(stack.publicUrl, '/oauth2/register', {
      method: 'POST',
      headers: { Host: `localhost:${port()}`, Origin: ADMITTED, 'Content-Type': 'application/json' },
      body,
    });

    expect(foreign.status).toBe(403);
    expect(foreign.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    expect(foreign.body).toMatch(GUARD);
    expect(admitted.status).toBe(201);
  });

  it('refuses a refresh token sent from another origin or under another Host, and the token stays good (nothing was used up)', async () => {
    const { clientId, refreshToken } = await signedInClient();
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }).toString();
    const send = (headers: Record<string, string>) =>
      raw(stack.publicUrl, '/oauth2/token', {
        method: 'POST',
        headers: { Host: `localhost:${port()}`, 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
        body: form,
      });

    const fromPage = await send({ Origin: FOREIGN });
    const rebound = await send({ Host: `rebound.example:${port()}` });
    const owner = await send({});

    expect([fromPage.status, rebound.status]).toEqual([403, 403]);
    expect(fromPage.body).toMatch(GUARD);
    expect(`${fromPage.body}${rebound.body}`).not.toContain('access_token');
    expect(owner.status).toBe(200);
    expect(JSON.parse(owner.body)).toMatchObject({ refresh_token: expect.any(String), access_token: expect.any(String) });
  });

  it('refuses any Origin at the private listener, the public listener’s own included: no web page is its client', async () => {
    const token = await stack.brokerToken();
    const ask = (origin: string) =>
      raw(stack.privateUrl, '/api/mcp/endpoint?agent_id=a-1', {
        headers: { Host: new URL(stack.privateUrl).host, Origin: origin, Authorization: `Bearer ${token}`, 'X-Service-Reason': 'checking' },
      });

    const answers = await Promise.all([ask(FOREIGN), ask(stack.publicUrl), ask('null')]);

    for (const res of answers) {
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.body).toMatch(
        /^This local service answers no web page, and this request comes from one \(it carries Origin or Sec-Fetch-Site\)\. \(request id: /,
      );
    }
  });
});

describe('E2E: client ID metadata documents', () => {
  it('fetches nothing for a token request whose client_id is a URL on this machine, and names nothing of it', async () => {
    const listener = await countingListener();
    try {
      const res = await fetch(`${stack.publicUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', code_verifier: pkce().verifier, client_id: listener.url }),
      });
      const body = await res.text();

      expect(res.status).toBe(401);
      expect(JSON.parse(body)).toMatchObject({ error: 'invalid_client' });
      expect(body).not.toMatch(/secret|internal|200|JSON|fetch/);
      expect(listener.count()).toBe(0);
    } finally {
      await listener.close();
    }
  });

  /** Runs `fn` with CLIENT_ID_DOCUMENT_DEV_ORIGINS naming `origins` (a developer's own document servers), then as before. */
  async function withDevOrigins<T>(origins: string[], fn: () => Promise<T>): Promise<T> {
    const previous = stack.updateEnvironment({ CLIENT_ID_DOCUMENT_DEV_ORIGINS: origins.join(',') });
    try {
      return await fn();
    } finally {
      stack.updateEnvironment(previous);
    }
  }

  it('fetches a failing document of a development origin once in the authorization step, shows no upstream detail, and keeps the failure for its whole origin', async () => {
    const listener = await countingListener(500);
    try {
      const [first, again, otherPath] = await withDevOrigins([new URL(listener.url).origin], async () => [
        await fetch(authorizationUrl(listener.url), { redirect: 'manual' }),
        await fetch(authorizationUrl(listener.url), { redirect: 'manual' }),
        // Another path on the same origin: not fetched either while the failure is kept.
        await fetch(authorizationUrl(listener.url.replace('/client.json', '/other/client.json')), { redirect: 'manual' }),
      ]);
      const page = await first!.text();

      expect([first!.status, again!.status, otherPath!.status]).toEqual([400, 400, 400]);
      expect(page).toContain(DOCUMENT_REFUSED);
      expect(page).not.toMatch(/500|secret|internal detail/);
      expect(listener.count()).toBe(1);
    } finally {
      await listener.close();
    }
  });

  it('answers a silent listener and a closed port after the same fixed time, so the time tells nothing of a port', async () => {
    const silent = await silentEndpoint();
    try {
      const closedPort = await closedPortEndpoint();
      const timed = async (base: string): Promise<{ status: number; page: string; ms: number }> => {
        const started = performance.now();
        const res = await fetch(authorizationUrl(`${base}/client.json`), { redirect: 'manual' });
        const page = await res.text();
        return { status: res.status, page, ms: performance.now() - started };
      };

      const [quiet, closed, refused] = await withDevOrigins([silent.endpoint, closedPort], () =>
        Promise.all([timed(silent.endpoint), timed(closedPort), timed(`http://127.0.0.1:${new URL(silent.endpoint).port}/never`)]),
      );

      for (const answer of [quiet, closed, refused]) {
        expect(answer.status).toBe(400);
        expect(answer.page).toContain(DOCUMENT_REFUSED);
        // Never before the fixed time; after it, only as late as a loaded machine makes any answer.
        expect(answer.ms).toBeGreaterThanOrEqual(DOCUMENT_FAILURE_MS - 20);
        expect(answer.ms).toBeLessThan(DOCUMENT_FAILURE_MS + 2_500);
      }
      expect(Math.abs(quiet.ms - closed.ms)).toBeLessThan(1_000);
    } finally {
      await silent.close();
    }
  });

  it('never connects to this machine for a document, by http or https, by loopback name, address or a name that resolves to it, unless CLIENT_ID_DOCUMENT_DEV_ORIGINS names the origin', async () => {
    let connections = 0;
    const server = createTcpServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const at = (server.address() as AddressInfo).port;
    // This machine's own name, where its hosts file resolves it to one of this machine's addresses: a
    // name that resolves to loopback or a private network, which only the connection's own lookup can catch.
    const ownName = hostname().toLowerCase();
    const ownNameIsLocal = (await lookup(ownName, { all: true }).catch(() => [])).some(
      ({ address }) => ipaddr.parse(address).range() !== 'unicast',
    );
    try {
      const pages = await Promise.all(
        [
          `http://127.0.0.1:${at}/client.json`,
          `http://localhost:${at}/client.json`,
          `https://127.0.0.1:${at}/client.json`,
          `https://localhost:${at}/client.json`,
          `https://[::ffff:127.0.0.1]:${at}/client.json`,
          ...(ownNameIsLocal ? [`https://${ownName}:${at}/client.json`] : []),
        ].map(async (url) => {
          const res = await fetch(authorizationUrl(url), { redirect: 'manual' });
          return { status: res.status, page: await res.text() };
        }),
      );

      for (const { status, page } of pages) {
        expect(status).toBe(400);
        expect(page).toContain(DOCUMENT_REFUSED);
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('E2E: CORS at the local stack', () => {
  const routes = [
    ['GET', '/.well-known/oauth-authorization-server'],
    ['GET', '/.well-known/openid-configuration'],
    ['GET', '/oauth2/jwks'],
    ['GET', '/.well-known/oauth-protected-resource'],
    ['GET', '/.well-known/oauth-protected-resource/api/mcp'],
    ['GET', '/.well-known/oauth-protected-resource/api/agents'],
    ['POST', '/oauth2/token'],
    ['POST', '/oauth2/register'],
    ['POST', '/api/mcp'],
    ['GET', '/api/agents'],
  ] as const;
  const ask = (method: string, path: string, origin: string, preflight: boolean): Promise<Response> =>
    fetch(`${stack.publicUrl}${path}`, {
      method: preflight ? 'OPTIONS' : method,
      headers: preflight
        ? { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'content-type' }
        : {
            Origin: origin,
            'Content-Type': method === 'POST' && path === '/oauth2/register' ? 'application/json' : 'application/x-www-form-urlencoded',
          },
      ...(preflight || method === 'GET' ? {} : { body: path === '/oauth2/register' ? '{}' : '' }),
    });

  it.each(routes)('never answers %s %s with Access-Control-Allow-Origin: *, and gives another origin none at all', async (method, path) => {
    for (const preflight of [false, true]) {
      const foreign = await ask(method, path, FOREIGN, preflight);
      const admitted = await ask(method, path, ADMITTED, preflight);
      await Promise.all([foreign.body?.cancel(), admitted.body?.cancel()]);

      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
      expect([null, ADMITTED]).toContain(admitted.headers.get('access-control-allow-origin'));
    }
  });

  it('lets an admitted origin read the public documents and the 401 that starts a sign-in', async () => {
    const documents = await Promise.all(
      ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/api/mcp'].map((path) =>
        ask('GET', path, ADMITTED, false),
      ),
    );
    const challenge = await ask('POST', '/api/mcp', ADMITTED, false);

    for (const res of [...documents, challenge]) expect(res.headers.get('access-control-allow-origin')).toBe(ADMITTED);
    expect(challenge.status).toBe(401);
  });
});

describe('E2E: the MCP door and its own origin', () => {
  it('admits a page of the stack itself (its own origin, by any loopback name) without MCP_ALLOWED_ORIGINS naming it, and refuses another', async () => {
    const token = await stack.mcpToken();
    const post = (origin: string) =>
      fetch(`${stack.publicUrl}/api/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          Origin: origin,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });

    const [local, loopback, foreign] = await Promise.all([post(stack.publicUrl), post(`http://127.0.0.1:${port()}`), post(FOREIGN)]);
    await Promise.all([local.body?.cancel(), loopback.body?.cancel(), foreign.body?.cancel()]);

    expect([local.status, loopback.status, foreign.status]).toEqual([200, 200, 403]);
    expect(local.headers.get('access-control-allow-origin')).toBe(stack.publicUrl);
  });
});

describe('E2E: authorization requests that are not valid', () => {
  it('shows a malformed request of a registered client on a page, not a redirect to its redirect URI (open redirector)', async () => {
    const res = await fetch(authorizationUrl(await publicClient(), { code_challenge_method: 'plain' }), { redirect: 'manual' });

    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it.each([
    ['a registered redirect URI carrying ?code=', `${REDIRECT}?code=1`, {}],
    [
      'a registered redirect URI carrying ?error=access_denied, in fragment mode',
      `${REDIRECT}?error=access_denied`,
      { response_mode: 'fragment' },
    ],
    ['the form_post response mode (an auto-posting form, not a redirect)', REDIRECT, { response_mode: 'form_post' }],
  ])('shows a malformed request on a page with %s, whatever the redirect would have said', async (_what, redirectUri, params) => {
    const registered = await register({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;

    const res = await fetch(authorizationUrl(clientId, { redirect_uri: redirectUri, code_challenge_method: 'plain', ...params }), {
      redirect: 'manual',
    });
    const page = await res.text();

    expect(registered.status).toBe(201);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page).toContain('(invalid_request).');
    expect(page).not.toContain('<form');
  });

  it('still sends a completed sign-in back to a redirect URI that carries ?code= of its own', async () => {
    const redirectUri = `${REDIRECT}?code=1`;
    const registered = await register({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;

    const back = await person.signIn(authorizationUrl(clientId, { redirect_uri: redirectUri }), { tenant: 'acme', user: 'jo' });

    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
  });
});

describe('E2E: registration', () => {
  it('refuses a text/plain body (what a page can post without a preflight), registering nothing', async () => {
    const res = await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, 'text/plain');
    const body = await res.text();

    expect(res.status).toBe(400);
    expect(body).not.toContain('client_id');
  });

  it.each(['view-source:https://app.example/cb', 'chrome://settings', 'filesystem:https://app.example/temporary/x', 'data:text/html,hi'])(
    'refuses the redirect URI %s',
    async (uri) => {
      const res = await register({ redirect_uris: [uri], token_endpoint_auth_method: 'none' });

      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    },
  );

  it('takes a native app’s private-use scheme named after its domain, reversed (RFC 8252 §7.1), and no other', async () => {
    const native = await register({ redirect_uris: ['com.example.app:/oauth/callback'], token_endpoint_auth_method: 'none' });
    const bare = await register({ redirect_uris: ['myapp://callback'], token_endpoint_auth_method: 'none' });

    expect(native.status).toBe(201);
    expect(await native.json()).toMatchObject({ redirect_uris: ['com.example.app:/oauth/callback'], application_type: 'native' });
    expect(bare.status).toBe(400);
  });

  it('never gives a registered client the broker’s token exchange', async () => {
    const res = await register({
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'],
    });

    expect(res.status).toBe(400);
    expect(stack.config.brokerClientId).toBe('local-broker');
  });
});
