import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAuthorizationServer } from '../../infra/local/authorization-server.js';
import { localIssuer } from '../../infra/local/issuer.js';
import { type ListenerRouter, listenerRouter } from '../../infra/local/router.js';
import { readStackConfig } from '../../infra/local/settings.js';
import { localDirWithKey } from '../helpers/local-dir.js';
import { browserStandIn, pkce, signInAsBrowser } from '../helpers/sign-in.js';

/**
 * The local authorization server (real oidc-provider, over real HTTP) with a store that keeps two
 * grants per client (infra/local/authorization-store.ts; a thousand in `npm start`): a client past
 * its cap is refused in one sentence on the sign-in page, and another client still signs in.
 */

const REDIRECT = 'http://127.0.0.1:45997/callback';

let server: Server;
let base = '';

beforeAll(async () => {
  let router: ListenerRouter | undefined;
  server = createServer((req, res) => {
    void router?.handle(req, res, randomUUID()).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://localhost:${port}`;
  const authorizationServer = await localAuthorizationServer({
    issuer: await localIssuer(await localDirWithKey('sign-in-cap-')),
    brokerSecret: 'local-broker-secret',
    config: readStackConfig({}, port),
    storeLimits: { perClient: 2, total: 100, others: 100 },
  });
  // No REST API on this listener: the authorization server's routes alone.
  router = listenerRouter(
    {
      routes: [],
      serve: async () => undefined,
      missing: (_req, res) => {
        res.writeHead(404);
        res.end();
      },
    },
    authorizationServer.routes,
  );
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

async function publicClient(): Promise<string> {
  const res = await fetch(`${base}/oauth2/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  return ((await res.json()) as { client_id: string }).client_id;
}

function authorizationUrl(clientId: string): URL {
  const url = new URL(`${base}/oauth2/authorize`);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(name, value);
  return url;
}

describe('Integration: the local sign-in keeps a bounded number of grants per client', () => {
  it('refuses a client its third sign-in in one sentence on the page, sends the browser nowhere, and signs another client in', async () => {
    const clientId = await publicClient();
    const signedIn = [
      await signInAsBrowser(authorizationUrl(clientId), { tenant: 'acme', user: 'a' }),
      await signInAsBrowser(authorizationUrl(clientId), { tenant: 'acme', user: 'b' }),
    ];

    const browser = browserStandIn();
    const { response: page, url } = await browser.follow(authorizationUrl(clientId), { method: 'GET' });
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(await page.text())?.[1] ?? '', url);
    const third = await browser.follow(action, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: url.origin },
      body: new URLSearchParams({ tenant: 'acme', user: 'c', groups: '', action: 'allow' }),
    });
    const other = await signInAsBrowser(authorizationUrl(await publicClient()), { tenant: 'acme', user: 'd' });

    expect(signedIn.map((back) => back.searchParams.has('code'))).toEqual([true, true]);
    expect(third.response.status).toBe(400);
    expect(third.url.origin).toBe(base);
    expect(await third.response.text()).toContain(
      'The local authorization server keeps at most 2 grants for one client, and this client holds that many until some expire (or npm start restarts).',
    );
    expect(other.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
  });
});
