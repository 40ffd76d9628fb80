/**
 * Where an issuer keeps its signing keys, as it says itself: the `jwks_uri` of its discovery
 * document. Providers put their keys at paths of their own (Keycloak
 * `/realms/<realm>/protocol/openid-connect/certs`, Okta `/oauth2/<server>/v1/keys`, Entra ID
 * `/<tenant>/discovery/v2.0/keys`…), so no path is guessed. The rules:
 * - the document is OpenID Connect Discovery 1.0's, `{issuer}/.well-known/openid-configuration`
 *   (§4, the issuer's terminating `/` removed), else RFC 8414's, `/.well-known/oauth-authorization-server`
 *   inserted between the issuer's host and its path (§3.1), asked only when the first is not
 *   there (a 4xx other than 408 or 429: a 5xx or a hang is the issuer down, not the document absent);
 * - its `issuer` must be the configured issuer exactly (OIDC Discovery §4.3, RFC 8414 §3.3): a
 *   document naming another is refused, never followed;
 * - its `jwks_uri` must be an https URL, or http only when the issuer itself is (a development
 *   issuer on this machine): keys are never fetched over a weaker channel than the issuer's name.
 * Pure: the caller fetches (lib/auth/key-set.ts, with its time bounds) and caches.
 */

/** Why a discovery document cannot be used, in a few words for the log (never the body). */
export class DiscoveryError extends Error {
  override name = 'DiscoveryError';
}

/** The discovery documents of `issuer`, in the order they are asked: OpenID Connect's, then RFC 8414's when it differs. */
export function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const openId = `${url.origin}${path}/.well-known/openid-configuration`;
  const oauth = `${url.origin}/.well-known/oauth-authorization-server${path}`;
  return [openId, oauth];
}

/** Whether an answer says the document is not at this URL (so the next form is asked), rather than that the issuer failed. */
export function isAbsentDocument(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** The key set URL a discovery document names, once it is the configured issuer's; throws DiscoveryError otherwise. */
export function jwksUriOf(document: unknown, issuer: string): string {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new DiscoveryError('the discovery document is not a JSON object');
  }
  const { issuer: named, jwks_uri: jwksUri } = document as { issuer?: unknown; jwks_uri?: unknown };
  if (named !== issuer) {
    throw new DiscoveryError(
      `the discovery document names the issuer ${JSON.stringify(named)}, not the configured ${JSON.stringify(issuer)}`,
    );
  }
  if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri)) throw new DiscoveryError('the discovery document names no jwks_uri URL');
  const protocol = new URL(jwksUri).protocol;
  const allowed = new URL(issuer).protocol === 'http:' ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(protocol)) throw new DiscoveryError(`the discovery document's jwks_uri is not https (${protocol})`);
  return jwksUri;
}
