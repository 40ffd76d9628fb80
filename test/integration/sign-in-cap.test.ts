import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAuthorizationServer } from '../../local/authorization-server.js';
import type { StoreLimits } from '../../local/authorization-store.js';
import { localIssuer } from '../../local/issuer.js';
import { type ListenerRouter, listenerRouter } from '../../local/listener-router.js';
import { readStackConfig } from '../../local/settings.js';
import { localDirWithKey } from '../helpers/local-dir.js';
import { authorizeUrl, personInChromium, pkce, registerPublicClient } from '../helpers/sign-in.js';

/**
 * The local authorization server (real oidc-provider, over real HTTP) with stores bounded low
 * (local/authorization-store.ts; a thousand grants per client and ten thousand of every other
 * kind in `npm start`): a client past its cap of two grants is refused in one sentence on the sign-in
 * page, and another client still signs in; a flood of sign-ins in progress three times their bound
 * pushes out only its own kind, so a rotated refresh token reused after it still ends its grant.
 * The sign-ins are pressed in headless Chromium.
 */

const person = personInChromium();
afterAll(() => person.close());

const REDIRECT = 'http://127.0.0.1:45997/callback';

interface TestServer {
  base: string;
  close(): Promise<void>;
}

/** The authorization server alone on a listener of its own (no REST API), with the store limits given. */
async function startAuthorizationServer(storeLimits: StoreLimits): Promise<TestServer> {
  let router: ListenerRouter | undefined;
  const server = createServer((req, res) => {
    void router?.handle(req, res, randomUUID()).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const authorizationServer = await localAuthorizationServer({
    issuer: await localIssuer(await localDirWithKey('sign-in-cap-')),
    brokerSecret: 'local-broker-secret',
    config: readStackConfig({}, port),
    storeLimits,
  });
  router = listenerRouter(
    {
      routes: [],
      serve: async () => undefined,
      missing: async (_req, res) => {
        res.writeHead(404);
        res.end();
      },
    },
    authorizationServer.routes,
  );
  return {
    base: `http://localhost:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const publicClient = (base: string, extra: Record<string, unknown> = {}): Promise<string> => registerPublicClient(base, REDIRECT, extra);

const authorizationUrl = (base: string, clientId: string, challenge = pkce().challenge): URL =>
  authorizeUrl(base, { clientId, redirectUri: REDIRECT, challenge });

describe('Integration: the local sign-in keeps a bounded number of grants per client', () => {
  let server: TestServer;
  let base = '';
  beforeAll(async () => {
    server = await startAuthorizationServer({ perClient: 2, total: 100, others: 100 });
    base = server.base;
  });
  afterAll(() => server?.close());

  it('refuses a client its third sign-in in one sentence on the page, sends the browser nowhere, and signs another client in', async () => {
    const clientId = await publicClient(base);
    const signedIn = [
      await person.signIn(authorizationUrl(base, clientId), { tenant: 'acme', user: 'a' }),
      await person.signIn(authorizationUrl(base, clientId), { tenant: 'acme', user: 'b' }),
    ];

    const third = await person.attempt(authorizationUrl(base, clientId), { tenant: 'acme', user: 'c' });
    const other = await person.signIn(authorizationUrl(base, await publicClient(base)), { tenant: 'acme', user: 'd' });

    expect(signedIn.map((back) => back.searchParams.has('code'))).toEqual([true, true]);
    expect(third.status).toBe(400);
    expect(third.url.origin).toBe(base);
    expect(third.text).toContain(
      'The local authorization server keeps at most 2 grants for one client, and this client holds that many until some expire (or npm start restarts).',
    );
    expect(other.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
  });
});

describe('Integration: a flood of sign-ins in progress pushes out only its own kind', () => {
  const OTHERS = 100;
  let server: TestServer;
  beforeAll(async () => {
    server = await startAuthorizationServer({ perClient: 1_000, total: 20_000, others: OTHERS });
  });
  afterAll(() => server?.close());

  async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${server.base}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('keeps refresh tokens through three times as many authorization requests as its store of sign-ins in progress holds, and a rotated one reused after them still ends the grant', async () => {
    const clientId = await publicClient(server.base, { grant_types: ['authorization_code', 'refresh_token'] });
    const { verifier, challenge } = pkce();
    const back = await person.signIn(authorizationUrl(server.base, clientId, challenge), { tenant: 'acme', user: 'fay' });
    const code = back.searchParams.get('code') ?? '';
    const first = (
      await token({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT })
    ).body;
    const second = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string, client_id: clientId });

    // Each one a sign-in in progress that the server keeps (an interaction), as any page or script can start them:
    // three times the store's bound, so it is full and its oldest pushed out, twice over.
    const limit = pLimit(8);
    const flood = await Promise.all(
      Array.from({ length: 3 * OTHERS }, () =>
        limit(async () => {
          const res = await fetch(authorizationUrl(server.base, clientId), { redirect: 'manual' });
          await res.body?.cancel();
          return res.status;
        }),
      ),
    );
    const third = await token({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token as string, client_id: clientId });
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string, client_id: clientId });
    const afterReuse = await token({ grant_type: 'refresh_token', refresh_token: third.body.refresh_token as string, client_id: clientId });

    expect(second.status).toBe(200);
    expect(new Set(flood)).toEqual(new Set([303]));
    expect(third.status).toBe(200);
    expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(afterReuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});
