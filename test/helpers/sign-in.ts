import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';

/**
 * The browser's part of an OAuth sign-in at the local authorization server, scripted as a browser
 * does it: open the authorization URL and follow the server's redirects (keeping its cookies) to
 * the sign-in page, submit its form with a tenant and a user from that page (its Origin), and
 * follow the redirects until the server sends the browser back to the client: that URL is returned
 * (the client's redirect URI with `code`, `state` and `iss`, or an error).
 */
export async function signInAsBrowser(
  authorizationUrl: string | URL,
  who: { tenant: string; user: string; groups?: string; action?: 'allow' | 'deny' },
): Promise<URL> {
  const browser = browserStandIn();
  const start = new URL(authorizationUrl);
  const { response: page, url: pageUrl } = await browser.follow(start, { method: 'GET' });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`the sign-in page answered ${page.status}: ${html.slice(0, 300)}`);
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error('the sign-in page has no form');
  const form = new URLSearchParams({ tenant: who.tenant, user: who.user, groups: who.groups ?? '', action: who.action ?? 'allow' });
  const { response: back, url } = await browser.follow(new URL(action.replace(/&amp;/g, '&'), pageUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: pageUrl.origin },
    body: form,
  });
  await back.body?.cancel();
  if (url.origin === start.origin)
    throw new Error(`the sign-in form answered ${back.status} without sending the browser back to the client`);
  return url;
}

/**
 * A browser's cookies and redirects, as far as a sign-in needs them: every cookie the server sets
 * is sent back to it, and redirects are followed while they stay on the server's origin. `follow`
 * returns the last answer of the server and, when it sends the browser elsewhere (the client's
 * redirect URI), that URL, not fetched.
 */
export function browserStandIn(): {
  follow(url: URL, init: RequestInit): Promise<{ response: Response; url: URL }>;
  cookies: Map<string, string>;
} {
  const cookies = new Map<string, string>();
  const send = async (url: URL, init: RequestInit): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (cookies.size > 0) headers.set('Cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';', 1)[0]!;
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      if (value === '' || /;\s*expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }
    return response;
  };
  return {
    cookies,
    async follow(url, init) {
      let response = await send(url, init);
      let at = url;
      for (let hops = 0; hops < 10 && [301, 302, 303, 307, 308].includes(response.status); hops++) {
        const next = new URL(response.headers.get('location') ?? '', at);
        await response.body?.cancel();
        if (next.origin !== url.origin) return { response, url: next };
        at = next;
        response = await send(at, { method: 'GET' });
      }
      return { response, url: at };
    },
  };
}

/** A client registration (RFC 7591) at the authorization server at `base`, answered as it comes. */
export function registerClient(base: string, metadata: Record<string, unknown>, contentType = 'application/json'): Promise<Response> {
  return fetch(`${base}/oauth2/register`, { method: 'POST', headers: { 'Content-Type': contentType }, body: JSON.stringify(metadata) });
}

/** A public client (no secret, PKCE) registered for `redirectUri`, with `extra` metadata; its client_id. Fails unless registered. */
export async function registerPublicClient(base: string, redirectUri: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await registerClient(base, { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', ...extra });
  if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** An authorization request (code, PKCE S256) of `clientId` to the server at `base`, with `params` added or replacing the defaults. */
export function authorizeUrl(
  base: string,
  request: { clientId: string; redirectUri: string; challenge: string },
  params: Record<string, string> = {},
): URL {
  const url = new URL(`${base}/oauth2/authorize`);
  const all = {
    response_type: 'code',
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    code_challenge: request.challenge,
    code_challenge_method: 'S256',
    ...params,
  };
  for (const [name, value] of Object.entries(all)) url.searchParams.set(name, value);
  return url;
}

/** A PKCE verifier and its S256 challenge (RFC 7636). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The claims of a JWT, unverified (the tests read what the issuer put in). */
export function claimsOf(jwt: string): Record<string, unknown> {
  return decodeJwt(jwt);
}

/**
 * The OAuthClientProvider a host application implements for the MCP SDK's OAuth client: here
 * everything kept in memory, the browser step left to the test (`authorizationUrl`).
 */
export class InMemoryOAuthProvider implements OAuthClientProvider {
  readonly clientMetadata;
  client: Parameters<NonNullable<OAuthClientProvider['saveClientInformation']>>[0] | undefined;
  saved: Parameters<OAuthClientProvider['saveTokens']>[0] | undefined;
  verifier = '';
  discovery: Parameters<NonNullable<OAuthClientProvider['saveDiscoveryState']>>[0] | undefined;
  authorizationUrl: URL | undefined;

  constructor(
    readonly redirectUrl: string,
    clientName: string,
  ) {
    this.clientMetadata = {
      client_name: clientName,
      redirect_uris: [redirectUrl],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: NonNullable<InMemoryOAuthProvider['client']>) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: NonNullable<InMemoryOAuthProvider['saved']>) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: NonNullable<InMemoryOAuthProvider['discovery']>) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}
