import type { Settings } from '../config.js';
import { type HttpError, httpError, unauthorized } from '../errors.js';
import { type DoorName, resourceMetadataUrl } from './public-doors.js';
import { INSUFFICIENT_SCOPE } from './scopes.js';

/**
 * RFC 6750 §3 quoted-string values may hold only printable ASCII other than `"` and `\`: a
 * sentence is made to fit (quotes become apostrophes, anything else outside the range a space).
 */
function quotable(text: string): string {
  return text.replace(/"/g, "'").replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, ' ');
}

/**
 * The one `WWW-Authenticate` value of a 401 at a public door: `Bearer` with the
 * `resource_metadata` of that door's RFC 9728 document (RFC 9728 §5.1) and the scope the door
 * requires (RFC 6750 §3, so a client asks for it; none when REQUIRED_SCOPE is empty), and, when a
 * token was sent and refused, `error="invalid_token"` with the refusal as `error_description`.
 * Without `refusal` (no token, or a refusal that cannot be told apart) there is no error code, as
 * RFC 6750 §3.1 asks. The gateway responses of the template and of the local gateway, and every
 * handler that answers 401 itself, build the header here, so they cannot drift.
 */
export function bearerChallenge(cfg: Pick<Settings, 'publicUrl' | 'requiredScope'>, door: DoorName, refusal?: string): string {
  const scope = cfg.requiredScope === undefined ? '' : `, scope="${quotable(cfg.requiredScope)}"`;
  const challenge = `Bearer resource_metadata="${resourceMetadataUrl(cfg, door)}"${scope}`;
  return refusal === undefined ? challenge : `${challenge}, ${invalidToken(refusal)}`;
}

/** RFC 6750 §3.1's error of a token that was sent and refused, with the refusal's sentence as its description. */
function invalidToken(refusal: string): string {
  return `error="invalid_token", error_description="${quotable(refusal)}"`;
}

/**
 * The 401 of a bearer token that was sent and failed its check (malformed, badly signed, of
 * another issuer or audience, expired, `alg: none`…): `WWW-Authenticate: Bearer
 * error="invalid_token", error_description="<sentence>"` (RFC 6750 §3.1). Where no door names its
 * document (the private operation), this is the answer; a public door answers with its own
 * challenge (refusedAtDoor, the gateway responses). The sentence is the client's one sentence,
 * never the token nor an internal detail. A request with no token at all gets no error code
 * (lib/errors.ts unauthorized's bare `Bearer`).
 */
export function refusedToken(sentence: string, cause?: unknown): HttpError {
  return unauthorized(sentence, cause, `Bearer ${invalidToken(sentence)}`);
}

/**
 * The 403 of a valid token without the scope `scope` (RFC 6750 §3.1 `insufficient_scope`, the
 * MCP authorization specification's step-up): at a public door its challenge names the door's
 * RFC 9728 document too (`at`: the door, under the public URL); at the private operation (`at`
 * undefined) it names the scope alone.
 */
export function insufficientScope(
  at: { cfg: Pick<Settings, 'publicUrl'>; door: DoorName } | undefined,
  scope: string,
  remedy = 'sign in again, asking for it',
): HttpError {
  const metadata = at === undefined ? '' : `resource_metadata="${resourceMetadataUrl(at.cfg, at.door)}", `;
  const challenge = `Bearer ${metadata}error="insufficient_scope", scope="${quotable(scope)}", error_description="${quotable(`The token lacks the scope ${scope}.`)}"`;
  return httpError(403, `${INSUFFICIENT_SCOPE} "${scope}" that this door requires: ${remedy}.`, {
    headers: { 'WWW-Authenticate': challenge },
  });
}

/**
 * A 401 at a public door, challenging with bearerChallenge: with the error code when a token was
 * sent and refused, without when none was sent.
 */
export function refusedAtDoor(
  cfg: Pick<Settings, 'publicUrl' | 'requiredScope'>,
  door: DoorName,
  sentence: string,
  tokenSent: boolean,
  cause?: unknown,
): HttpError {
  const challenge = bearerChallenge(cfg, door, tokenSent ? sentence : undefined);
  return unauthorized(sentence, cause, challenge);
}
