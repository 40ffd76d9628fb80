import { decodeProtectedHeader, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import { HttpError, retryLater, unauthorized } from '../errors.js';
import { refusedToken } from './challenge.js';
import type { KeySource } from './key-set.js';

export { type KeySource, remoteKeys } from './key-set.js';

/** The algorithms an API Gateway JWT authorizer accepts: RSA signatures only. */
export const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];

/**
 * How far in the future `iat` may lie (clocks differ a little). A token issued later than that
 * is refused, as the API Gateway JWT authorizer refuses it.
 */
export const ISSUED_AT_SKEW_SECONDS = 60;

export interface VerifyOptions {
  issuer: string;
  audience: string;
  keys: KeySource;
  /** The caller's deadline: a key fetch stops with it. */
  signal?: AbortSignal;
}

/**
 * Extracts the token from an `Authorization: Bearer <token>` header value. No header, or another
 * scheme, is a 401 without an error code (RFC 6750 §3.1: no bearer token was sent); a `Bearer`
 * value that is no token (RFC 6750 §2.1 b64token) is a sent token refused, `invalid_token`.
 */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw unauthorized('A bearer token is required.');
  const value = header.trim();
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(value);
  if (match?.[1]) return match[1];
  if (/^Bearer(?:[ ]|$)/i.test(value)) throw refusedToken('The bearer token is malformed.');
  throw unauthorized('The Authorization header is not a bearer token.');
}

/**
 * Verifies a bearer JWT the way an API Gateway JWT authorizer does: a `kid` in the header, an RSA
 * signature by a key of the issuer's JWKS, `iss` exactly, `aud` containing the audience (or, when
 * the token has no `aud`, `client_id` equal to it), `exp` and `nbf`, and an `iat` not later than
 * now plus ISSUED_AT_SKEW_SECONDS. Every refusal is a 401 whose text never repeats the token, with
 * RFC 6750's `error="invalid_token"` (challenge.ts refusedToken); an unreachable or unreadable JWKS
 * or discovery document is a 503 (504 when it did not answer in time), never a 401.
 */
export async function verifyBearerToken(token: string, options: VerifyOptions): Promise<JWTPayload> {
  const payload = await verifySignedToken(token, options);
  if (!hasAudience(payload, options.audience)) throw refusedToken('The bearer token is not for this service (audience).');
  return payload;
}

/**
 * verifyBearerToken in every respect but the audience, which the caller judges (hasAudience): the
 * observations operation answers a token made for another service (a user's token passed through)
 * with an audited 403 rather than a 401.
 */
export async function verifySignedToken(token: string, options: Omit<VerifyOptions, 'audience'>): Promise<JWTPayload> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch (cause) {
    throw refusedToken('The bearer token is malformed.', cause);
  }
  if (typeof kid !== 'string' || kid === '') throw refusedToken('The bearer token has no key id.');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, (header) => options.keys.getKey(header, options.signal), {
      issuer: options.issuer,
      algorithms: RSA_ALGORITHMS,
      requiredClaims: ['exp'],
    }));
  } catch (cause) {
    throw refusal(cause, options.issuer);
  }
  if (typeof payload.iat === 'number' && payload.iat > Math.floor(Date.now() / 1000) + ISSUED_AT_SKEW_SECONDS) {
    throw refusedToken('The bearer token was issued in the future.');
  }
  return payload;
}

/** Whether verified claims are for `audience`: `aud` names it, or (a token with no `aud`) `client_id` is it. */
export function hasAudience(payload: JWTPayload, audience: string): boolean {
  const aud = payload.aud;
  const audiences = aud === undefined ? [] : Array.isArray(aud) ? aud : [aud];
  return audiences.length > 0 ? audiences.includes(audience) : payload.client_id === audience;
}

/**
 * The refusal of a token from another issuer names the issuer expected (public: the protected
 * resource metadata names it too), never what the token says.
 */
function issuerRefusal(expected: string): string {
  return `The bearer token's "iss" claim is not the issuer this service accepts, "${expected}".`;
}

function refusal(cause: unknown, issuer: string): Error {
  // The key source's own answers (an unknown key, an issuer that is down) stand as they are.
  if (cause instanceof HttpError) return cause;
  if (cause instanceof joseErrors.JWTExpired) return refusedToken('The bearer token has expired.', cause);
  if (cause instanceof joseErrors.JWTClaimValidationFailed && cause.claim === 'iss') return refusedToken(issuerRefusal(issuer), cause);
  if (cause instanceof joseErrors.JWTClaimValidationFailed) {
    return refusedToken(`The bearer token's "${cause.claim}" claim is not acceptable.`, cause);
  }
  if (cause instanceof joseErrors.JWSSignatureVerificationFailed) {
    return refusedToken('The bearer token signature is invalid.', cause);
  }
  if (cause instanceof joseErrors.JWKSNoMatchingKey) return refusedToken('The bearer token was signed by an unknown key.', cause);
  if (cause instanceof joseErrors.JOSEAlgNotAllowed) return refusedToken('The bearer token uses a refused algorithm.', cause);
  if (cause instanceof joseErrors.JOSEError) return refusedToken('The bearer token is invalid.', cause);
  // Anything else failed on our side of the check, not in the caller's token.
  return retryLater(503, 'The token keys are unavailable right now; try again later.', cause);
}
