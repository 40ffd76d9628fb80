import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { doorResource } from '../../lib/auth/public-doors.js';
import { documentRefused } from '../../local/client-id-documents.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import {
  authorizeUrl,
  claimsOf,
  personInChromium,
  pkce,
  redirectFollower,
  registerClient,
  registerPublicClient,
} from '../helpers/sign-in.js';
import { DOCUMENT_FAILURE_MS } from '../helpers/stack.js';

/**
 * The local authorization server (oidc-provider, local/authorization-server.ts), over real
 * HTTP on the local stack: its metadata, dynamic client registration, client ID metadata documents,
 * the sign-in page (pressed in headless Chromium), the authorization code with PKCE, resource
 * indicators, refresh tokens, and the RFC 8693 token exchange of the MCP broker. What it refuses
 * for safety's sake: test/e2e/sign-in-hardening.test.ts.
 */

/** The sentence of every document failure, with the test stacks' fixed time. */
const DOCUMENT_REFUSED = documentRefused(DOCUMENT_FAILURE_MS);

let stack: SharedStack;
const person = personInChromium();

beforeAll(async () => {
  stack = await sharedStack('none');
});
afterAll(async () => {
  await person.close();
  await stack?.release();
});

const url = (path: string): string => `${stack.publicUrl}${path}`;

const register = (metadata: Record<string, unknown>): Promise<Response> => registerClient(stack.publicUrl, metadata);

const REDIRECT = 'http://127.0.0.1:45999/callback';

const publicClient = (extra: Record<string, unknown> = {}): Promise<string> =>
  registerPublicClient(stack.publicUrl, REDIRECT, {
    client_name: 'test client',
    grant_types: ['authorization_code', 'refresh_token'],
    ...extra,
  });

const authorizationUrl = (clientId: string, challenge: string, params: Record<string, string> = {}): URL =>
  authorizeUrl(
    stack.publicUrl,
    { clientId, redirectUri: REDIRECT, challenge },
    { state: 'xyz', resource: stack.config.mcpAudience, ...params },
  );

async function token(
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url('/oauth2/token'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Signs in through the page and redeems the code: what any MCP client does. */
async function signInFor(
  clientId: string,
  who: { tenant: string; user: string; groups?: string } = { tenant: 'acme', user: 'alice' },
  resource = stack.config.mcpAudience,
  /** More parameters of the authorization request (a scope, a prompt). */
  asking: Record<string, string> = {},
) {
  const { verifier, challenge } = pkce();
  const back = await person.signIn(authorizationUrl(clientId, challenge, { resource, ...asking }), who);
  const code = back.searchParams.get('code')!;
  return {
    back,
    code,
    verifier,
    redeem: (extra: Record<string, string> = {}) =>
      token({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: REDIRECT,
        resource,
        ...extra,
      }),
  };
}

/** The status a door answers a token with: GET /api/agents, or an MCP `tools/list` on POST /api/mcp. */
async function askDoor(door: 'mcp' | 'inventory', accessToken: string): Promise<number> {
  const res =
    door === 'inventory'
      ? await fetch(url('/api/agents'), { headers: { Authorization: `Bearer ${accessToken}` } })
      : await fetch(url('/api/mcp'), {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${accessToken}`,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
  await res.body?.cancel();
  return res.status;
}

describe('E2E: the local issuer as an OAuth 2.1 authorization server', () => {
  it('answers a method an issuer route does not serve as every failure: 405 text/plain with Allow, the request id and no-store', async () => {
    const res = await fetch(url('/oauth2/token'), { method: 'PUT' });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('OPTIONS, POST');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toMatch(/^This method is not served here\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('advertises the code flow with PKCE S256, registration, client ID metadata documents, refresh and the token exchange (RFC 8414)', async () => {
    const res = await fetch(url('/.well-known/oauth-authorization-server'));

    const metadata = (await res.json()) as Record<string, string[]>;
    expect(res.status).toBe(200);
    expect(metadata).toMatchObject({
      issuer: stack.config.jwtIssuer,
      authorization_endpoint: url('/oauth2/authorize'),
      token_endpoint: url('/oauth2/token'),
      registration_endpoint: url('/oauth2/register'),
      jwks_uri: url('/oauth2/jwks'),
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['openid', 'offline_access', 'endpoints:read'],
    });
    expect([...metadata.grant_types_supported!].sort()).toEqual(
      ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'].sort(),
    );
    expect([...metadata.token_endpoint_auth_methods_supported!].sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
  });

  it('publishes its keys where oidc-provider serves them, named by both discovery documents, and nothing at /.well-known/jwks.json, which most providers do not serve', async () => {
    const [openId, oauth, keys, guessed] = await Promise.all(
      ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/oauth2/jwks', '/.well-known/jwks.json'].map(
        (path) => fetch(url(path)),
      ),
    );

    expect(openId!.status).toBe(200);
    expect(await openId!.json()).toMatchObject({ issuer: stack.config.jwtIssuer, jwks_uri: url('/oauth2/jwks') });
    expect(await oauth!.json()).toMatchObject({ issuer: stack.config.jwtIssuer, jwks_uri: url('/oauth2/jwks') });
    expect(keys!.status).toBe(200);
    expect(((await keys!.json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid)).toEqual([stack.issuer.kid]);
    expect(guessed!.status).toBe(404);
  });

  it('registers a public client (RFC 7591) and a confidential one with a secret', async () => {
    const open = await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Claude' });
    const confidential = await register({ redirect_uris: ['https://app.example/cb'] });

    expect(open.status).toBe(201);
    const openBody = (await open.json()) as Record<string, unknown>;
    expect(openBody).toMatchObject({
      client_id: expect.stringMatching(/^local-/),
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      client_name: 'Claude',
    });
    expect(openBody.client_secret).toBeUndefined();
    expect(await confidential.json()).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret: expect.any(String),
      client_secret_expires_at: 0,
    });
  });

  it.each([
    ['no redirect URI', { token_endpoint_auth_method: 'none' }, 'invalid_redirect_uri'],
    ['an http redirect URI off this machine', { redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
    ['a javascript: redirect URI', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['the client_credentials grant', { redirect_uris: [REDIRECT], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
  ])('refuses to register a client with %s', async (_what, metadata, error) => {
    const res = await register(metadata);

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error });
  });

  it('shows a sign-in page marked as local development only, and answers the redirect with a code, the state and its issuer (RFC 9207)', async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();

    const { response: page } = await redirectFollower().follow(authorizationUrl(clientId, challenge), { method: 'GET' });
    const html = await page.text();
    const back = await person.signIn(authorizationUrl(clientId, challenge), { tenant: 'globex', user: 'bob' });

    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(html).toContain('Local development sign-in: no password.');
    expect(html).toContain('<option value="acme" selected>acme</option><option value="globex">globex</option>');
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(back.searchParams.get('state')).toBe('xyz');
    expect(back.searchParams.get('iss')).toBe(stack.config.jwtIssuer);
  });

  it('issues, for the code and its PKCE verifier, an access token for exactly the resource asked, with the tenant and user chosen, and a refresh token', async () => {
    const clientId = await publicClient();
    const { redeem } = await signInFor(clientId, { tenant: 'globex', user: 'bob' });

    const { status, body } = await redeem();

    expect(status).toBe(200);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String) });
    expect(claimsOf(body.access_token as string)).toMatchObject({
      iss: stack.config.jwtIssuer,
      aud: stack.config.mcpAudience,
      sub: 'bob',
      tenant_id: 'globex',
      client_id: clientId,
      scope: 'endpoints:read',
    });
  });

  it.each([
    ['only openid offline_access, as mcp-remote does', 'openid offline_access'],
    ['another scope', 'endpoints:write'],
  ])(
    "grants the doors' scope to a client that asks %s, and no scope it may not have, with no notice in the terminal",
    async (_asked, scope) => {
      // oidc-provider prints a notice (console.info) the first time it falls back on a lifetime of its own.
      const notices = vi.spyOn(console, 'info');
      const clientId = await publicClient();
      const { verifier, challenge } = pkce();
      const back = await person.signIn(authorizationUrl(clientId, challenge, { scope }), { tenant: 'acme', user: 'dora' });

      const { status, body } = await token({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: REDIRECT,
        resource: stack.config.mcpAudience,
      });

      expect(status).toBe(200);
      expect(claimsOf(body.access_token as string).scope).toBe('endpoints:read');
      expect(notices.mock.calls.flat().join('\n')).not.toMatch(/oidc-provider/);
      notices.mockRestore();
    },
  );

  it.each(['mcp', 'inventory'] as const)(
    "signs in a client registered with scope 'openid offline_access' for the %s door, which registers the doors' scope with it and gets it in the token the door takes",
    async (door) => {
      const registered = await register({
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid offline_access',
      });
      const { client_id: clientId, scope: registeredScope } = (await registered.json()) as { client_id: string; scope: string };
      const resource = doorResource(stack.config, door);

      const { back, redeem } = await signInFor(clientId, { tenant: 'acme', user: 'gus' }, resource, { scope: 'openid offline_access' });
      const { status, body } = await redeem();
      const opened = await askDoor(door, body.access_token as string);

      expect(registered.status).toBe(201);
      expect(registeredScope).toBe('openid offline_access endpoints:read');
      expect(back.searchParams.get('error')).toBeNull();
      expect(status).toBe(200);
      expect(claimsOf(body.access_token as string).scope).toBe('endpoints:read');
      expect(opened).toBe(200);
    },
  );

  it.each(['mcp', 'inventory'] as const)(
    "keeps the doors' scope on a refresh for the %s door that asks for less (scope=openid offline_access, as mcp-remote asks), so the door takes the token it gets",
    async (door) => {
      const clientId = await publicClient();
      const resource = doorResource(stack.config, door);
      // As the SDK's OAuth client asks offline_access (with the consent prompt OpenID Connect requires for it).
      const { redeem } = await signInFor(clientId, { tenant: 'acme', user: 'hal' }, resource, {
        scope: 'openid offline_access',
        prompt: 'consent',
      });
      const first = await redeem();

      const refreshed = await token({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token as string,
        client_id: clientId,
        scope: 'openid offline_access',
      });
      const opened = await askDoor(door, refreshed.body.access_token as string);

      expect(first.status).toBe(200);
      expect(refreshed.status).toBe(200);
      expect(claimsOf(refreshed.body.access_token as string)).toMatchObject({ scope: 'endpoints:read', sub: 'hal' });
      expect(opened).toBe(200);
    },
  );

  it('refuses a refresh that asks a scope the sign-in never granted with invalid_scope, never a 200 token the doors refuse', async () => {
    const clientId = await publicClient();
    const first = (await (await signInFor(clientId, { tenant: 'acme', user: 'ivy' })).redeem()).body;

    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token as string,
      client_id: clientId,
      scope: 'openid',
    });

    expect(refreshed).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });
  });

  it('issues a token for the inventory when that is the resource asked (RFC 8707), and it opens the inventory only', async () => {
    const clientId = await publicClient();
    const { redeem } = await signInFor(clientId, { tenant: 'acme', user: 'carol' }, doorResource(stack.config, 'inventory'));

    const { body } = await redeem();
    const agents = await fetch(url('/api/agents'), { headers: { Authorization: `Bearer ${body.access_token as string}` } });
    const mcp = await fetch(url('/api/mcp'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${body.access_token as string}`, 'Content-Type': 'application/json' },
      body: '{}',
    });

    expect(claimsOf(body.access_token as string)).toMatchObject({ aud: stack.config.jwtAudience });
    expect(agents.status).toBe(200);
    expect(mcp.status).toBe(401);
  });

  it.each([
    [
      'a code used twice',
      async (c: Awaited<ReturnType<typeof signInFor>>) => {
        await c.redeem();
        return c.redeem();
      },
      'invalid_grant',
    ],
    ['a wrong code verifier', (c: Awaited<ReturnType<typeof signInFor>>) => c.redeem({ code_verifier: pkce().verifier }), 'invalid_grant'],
    [
      'another redirect URI',
      (c: Awaited<ReturnType<typeof signInFor>>) => c.redeem({ redirect_uri: 'http://127.0.0.1:45999/other' }),
      'invalid_grant',
    ],
    [
      'another resource than the one signed in for',
      (c: Awaited<ReturnType<typeof signInFor>>) => c.redeem({ resource: doorResource(stack.config, 'inventory') }),
      'invalid_target',
    ],
  ])('refuses %s', async (_what, send, error) => {
    const attempt = await signInFor(await publicClient());

    const { status, body } = await send(attempt);

    expect(status).toBe(400);
    expect(body).toMatchObject({ error });
  });

  it('rotates refresh tokens: a refresh gives new tokens for the same user, resource and groups, and the used refresh token no longer works', async () => {
    const clientId = await publicClient();
    const first = (await (await signInFor(clientId, { tenant: 'acme', user: 'dora', groups: 'emea servers' })).redeem()).body;

    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string, client_id: clientId });
    const replayed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string, client_id: clientId });

    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    expect(claimsOf(refreshed.body.access_token as string)).toMatchObject({
      sub: 'dora',
      tenant_id: 'acme',
      endpoint_groups: ['emea', 'servers'],
      aud: stack.config.mcpAudience,
    });
    expect(replayed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('ends the whole grant when a rotated refresh token is used again (RFC 9700 §4.14.2): the newest refresh token stops working too', async () => {
    const clientId = await publicClient();
    const first = (await (await signInFor(clientId, { tenant: 'acme', user: 'eve' })).redeem()).body;
    const second = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string, client_id: clientId });

    // Someone else replays the rotated token: the server cannot tell thief from owner, so the grant ends.
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string, client_id: clientId });
    const afterReuse = await token({
      grant_type: 'refresh_token',
      refresh_token: second.body.refresh_token as string,
      client_id: clientId,
    });

    expect(second.status).toBe(200);
    expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(afterReuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('sends the browser back with access_denied when the user cancels', async () => {
    const clientId = await publicClient();

    const back = await person.signIn(authorizationUrl(clientId, pkce().challenge), { tenant: 'acme', user: 'erin', action: 'deny' });

    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it.each([
    ['without PKCE', { code_challenge: '' }, 'invalid_request'],
    ['with the plain PKCE method', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['for a resource the issuer does not serve', { resource: 'https://elsewhere.example/api' }, 'invalid_target'],
    ['for the observations audience (only the broker gets it, by exchange)', { resource: 'endpoint-observations' }, 'invalid_'],
    ['with another response type', { response_type: 'token' }, 'unsupported_response_type'],
  ])('shows an authorization request %s on a page, never sending the browser back (RFC 9700 §4.11.2)', async (_what, params, error) => {
    const res = await fetch(authorizationUrl(await publicClient(), pkce().challenge, params), { redirect: 'manual' });

    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain(`(${error}`);
  });

  it('shows an error page, never a redirect, for an unknown client or a redirect URI it did not register', async () => {
    const unknown = await fetch(authorizationUrl('no-such-client', pkce().challenge), { redirect: 'manual' });
    const foreign = await fetch(authorizationUrl(await publicClient(), pkce().challenge, { redirect_uri: 'https://evil.example/cb' }), {
      redirect: 'manual',
    });

    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('location')).toBeNull();
    expect(await unknown.text()).toContain('Sign-in failed');
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get('location')).toBeNull();
  });

  describe('with a client ID metadata document', () => {
    let documents: Server;
    let documentUrl = '';
    let before: Record<string, string | undefined> = {};

    beforeAll(async () => {
      documents = createServer((req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        // A document far past the 64 KiB bound, sent without a length: the issuer must stop reading it.
        if (req.url?.endsWith('/huge.json')) return void res.on('error', () => undefined).end(`${' '.repeat(1 << 20)}{}`);
        res.end(
          JSON.stringify({
            client_id: documentUrl,
            client_name: 'Metadata client',
            redirect_uris: [REDIRECT],
            token_endpoint_auth_method: 'none',
            grant_types: ['authorization_code'],
          }),
        );
      });
      await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
      documentUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}/oauth/client.json`;
      // A document served on this machine is fetched only from an origin the developer names.
      before = stack.updateEnvironment({ CLIENT_ID_DOCUMENT_DEV_ORIGINS: new URL(documentUrl).origin });
    });
    afterAll(async () => {
      stack.updateEnvironment(before);
      await new Promise((resolve) => documents.close(resolve));
    });

    it('signs in a client known only by the URL of its document (fetched from this machine, from the development origin named)', async () => {
      const { challenge, verifier } = pkce();

      const page = await (await redirectFollower().follow(authorizationUrl(documentUrl, challenge), { method: 'GET' })).response.text();
      const back = await person.signIn(authorizationUrl(documentUrl, challenge), { tenant: 'acme', user: 'frank' });
      const { status, body } = await token({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: documentUrl,
        redirect_uri: REDIRECT,
      });

      expect(page).toContain('<strong>Metadata client</strong>');
      expect(status).toBe(200);
      expect(body.refresh_token).toBeUndefined();
      expect(claimsOf(body.access_token as string)).toMatchObject({ sub: 'frank', client_id: documentUrl });
    });

    it.each([
      ['of more than 16 KiB, reading no further than that', 'huge.json'],
      ['that names another client_id', 'other.json'],
    ])('refuses a document %s, on a page that says what a document must be', async (_what, file) => {
      const res = await fetch(authorizationUrl(documentUrl.replace('client.json', file), pkce().challenge), { redirect: 'manual' });

      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain(DOCUMENT_REFUSED);
    });
  });
});

describe('E2E: the token exchange at the local issuer', () => {
  const exchange = (form: Record<string, string>, clientSecret = stack.brokerSecret): Promise<Response> =>
    fetch(url('/oauth2/token'), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`local-broker:${clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams(form),
    });
  const grant = async (subjectToken: string, audience = stack.config.observationsAudience): Promise<Record<string, string>> => ({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: subjectToken,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    audience,
  });

  it('issues a short-lived token for the observations audience that names the user, the tenant and the broker as actor', async () => {
    const res = await exchange(await grant(await stack.mcpToken({ tenant: 'acme', subject: 'carol' })));
    const body = (await res.json()) as { access_token: string; expires_in: number; issued_token_type: string; token_type: string };

    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(body).toMatchObject({
      token_type: 'Bearer',
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      expires_in: 300,
    });
    expect(claimsOf(body.access_token)).toMatchObject({
      sub: 'carol',
      tenant_id: 'acme',
      aud: stack.config.observationsAudience,
      act: { sub: 'local-broker' },
      iss: stack.config.jwtIssuer,
    });
  });

  it("never issues a token that outlives the user's: a subject token with 40 s left gives one with at most 40 s", async () => {
    const res = await exchange(await grant(await stack.mcpToken({ tenant: 'acme', subject: 'gina', expiresInSeconds: 40 })));
    const body = (await res.json()) as { access_token: string; expires_in: number };
    const claims = claimsOf(body.access_token);

    expect(res.status).toBe(200);
    expect(body.expires_in).toBeGreaterThan(30);
    expect(body.expires_in).toBeLessThanOrEqual(40);
    expect(claims.exp as number).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 40);
  });

  it.each([
    ['a wrong client secret', async () => exchange(await grant(await stack.mcpToken()), 'wrong'), 401, 'invalid_client'],
    [
      'an audience the broker may not ask for',
      async () => exchange(await grant(await stack.mcpToken(), stack.config.jwtAudience)),
      400,
      'invalid_target',
    ],
    ['a subject token for another resource (the inventory)', async () => exchange(await grant(await stack.token())), 400, 'invalid_grant'],
    ['an expired subject token', async () => exchange(await grant(await stack.mcpToken({ expiresInSeconds: -10 }))), 400, 'invalid_grant'],
    ['another grant type', async () => exchange({ grant_type: 'client_credentials' }), 400, 'unsupported_grant_type'],
  ])('refuses %s', async (_what, send, status, error) => {
    const res = await send();

    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ error });
  });
});
