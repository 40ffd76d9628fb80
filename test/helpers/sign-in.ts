import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';

/**
 * The browser's part of an OAuth sign-in at the local issuer, scripted: open the authorization URL
 * (the sign-in page), submit its form with a tenant and a user, and return where the issuer sends
 * the browser back (the client's redirect URI with `code`, `state` and `iss`, or an error).
 */
export async function signInAsBrowser(
  authorizationUrl: string | URL,
  who: { tenant: string; user: string; action?: 'allow' | 'deny' },
): Promise<URL> {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`the sign-in page answered ${page.status}: ${html.slice(0, 300)}`);
  const request = /name="request" value="([^"]+)"/.exec(html)?.[1];
  if (!request) throw new Error('the sign-in page has no form');
  const submitted = await fetch(new URL('/oauth2/authorize', authorizationUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request, tenant: who.tenant, user: who.user, action: who.action ?? 'allow' }),
    redirect: 'manual',
  });
  const location = submitted.headers.get('location');
  if (submitted.status !== 303 || !location)
    throw new Error(`the sign-in form answered ${submitted.status}: ${(await submitted.text()).slice(0, 300)}`);
  return new URL(location);
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
