import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import type { Browser, Response as PageResponse } from 'playwright-core';
import { launchChromium } from './browser.js';

/** What a person chooses on the local sign-in page, and the button they press. */
export interface Person {
  tenant: string;
  user: string;
  /** Endpoint groups typed into the page, separated by spaces. */
  groups?: string;
  action?: 'allow' | 'deny';
}

/** Where a browser went after a sign-in button was pressed: the client's redirect URI, or a page of the server. */
export interface SignInOutcome {
  /** The last URL the browser navigated to (after the server's redirects). */
  url: URL;
  /** Its answer's status; 0 when nothing answered there (a test's client that does not listen on its redirect URI). */
  status: number;
  /** The text of the page the browser shows, as a person reads it. */
  text: string;
}

/**
 * A person at the local sign-in page, in headless Chromium (test/helpers/browser.ts): they open the
 * authorization URL, pick the tenant, type the user and the groups, press the button, and the
 * browser follows the server wherever it sends it, the client's redirect URI included (loaded
 * there: mcp-remote takes its code at its own listener; a test's client reads the URL, as a native
 * app reads the redirect it receives). Nothing of what the browser sends is written here: its
 * headers (Origin, Referer, Sec-Fetch-*) and cookies are Chromium's own. Each sign-in has a fresh
 * browser profile (no cookie of an earlier one). Chromium starts at the first sign-in; `close()`
 * in the file's afterAll.
 */
export function personInChromium(): {
  /** The redirect URI the browser was sent to, with `code`, `state` and `iss` (or `error`); fails if it stayed at the server. */
  signIn(authorizationUrl: string | URL, person: Person): Promise<URL>;
  /** Wherever the browser ended, a refusal page of the server included. */
  attempt(authorizationUrl: string | URL, person: Person): Promise<SignInOutcome>;
  /** The Chromium this person uses, for a test that opens other pages in it. */
  browser(): Promise<Browser>;
  close(): Promise<void>;
} {
  let launched: Promise<Browser> | undefined;
  const browser = (): Promise<Browser> => {
    launched ??= launchChromium();
    return launched;
  };
  const attempt = async (authorizationUrl: string | URL, person: Person): Promise<SignInOutcome> => {
    const context = await (await browser()).newContext();
    try {
      const page = await context.newPage();
      const opened = await page.goto(new URL(authorizationUrl).href);
      if (opened?.status() !== 200)
        throw new Error(`the sign-in page answered ${opened?.status()}: ${((await page.textContent('body')) ?? '').slice(0, 300)}`);
      await page.selectOption('#tenant', person.tenant);
      await page.fill('#user', person.user);
      await page.fill('#groups', person.groups ?? '');
      // The main frame's last navigation after the press (each redirect is a request of its own), and its answer.
      let last: { url: string; response?: PageResponse } | undefined;
      page.on('request', (request) => {
        if (request.isNavigationRequest() && request.frame() === page.mainFrame()) last = { url: request.url() };
      });
      page.on('response', (response) => {
        if (last && response.request().url() === last.url && response.request().isNavigationRequest()) last.response = response;
      });
      const loaded = page.waitForEvent('load');
      await page.click(`button[value="${person.action ?? 'allow'}"]`);
      await loaded;
      if (!last) throw new Error('pressing the sign-in button went nowhere');
      return { url: new URL(last.url), status: last.response?.status() ?? 0, text: (await page.textContent('body')) ?? '' };
    } finally {
      await context.close();
    }
  };
  return {
    attempt,
    browser,
    async signIn(authorizationUrl, person) {
      const outcome = await attempt(authorizationUrl, person);
      if (outcome.url.origin === new URL(authorizationUrl).origin)
        throw new Error(
          `the sign-in answered ${outcome.status} without sending the browser back to the client: ${outcome.text.slice(0, 300)}`,
        );
      return outcome.url;
    },
    async close() {
      await (await launched)?.close();
    },
  };
}

/**
 * A program reading the server's pages as a browser would get them, without being one (it sets
 * none of a browser's headers): every cookie the server sets every cookie the server sets
 * is sent back to it, and redirects are followed while they stay on the server's origin. `follow`
 * returns the last answer of the server and, when it sends the browser elsewhere (the client's
 * redirect URI), that URL, not fetched.
 */
export function redirectFollower(): {
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
