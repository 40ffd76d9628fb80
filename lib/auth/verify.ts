import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { GatewayTimeoutError, ServiceUnavailableError, UnauthorizedError } from '../errors.js';

/** The algorithms an API Gateway JWT authorizer accepts: RSA signatures only. */
export const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];

export interface VerifyOptions {
  issuer: string;
  audience: string;
  keys: JWTVerifyGetKey;
}

const jwksCache = new Map<string, JWTVerifyGetKey>();

/** A JWKS fetched from its URL and cached (keys and cooldown) across invocations of a warm Lambda. */
export function remoteKeys(jwksUrl: string): JWTVerifyGetKey {
  let keys = jwksCache.get(jwksUrl);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(jwksUrl), { timeoutDuration: 2000, cooldownDuration: 30_000, cacheMaxAge: 600_000 });
    jwksCache.set(jwksUrl, keys);
  }
  return keys;
}

/** Extracts the token from an `Authorization: Bearer <token>` header value. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw new UnauthorizedError('A bearer token is required.');
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header.trim());
  if (!match?.[1]) throw new UnauthorizedError('The Authorization header is not a bearer token.');
  return match[1];
}

/**
 * Verifies a bearer JWT the way an API Gateway JWT authorizer does: a `kid` in the header, an RSA
 * signature by a key of the issuer's JWKS, `iss` exactly, `aud` containing the audience (or, when
 * the token has no `aud`, `client_id` equal to it), and `exp`/`nbf`/`iat`. Every refusal is a 401
 * whose text never repeats the token; an unreachable JWKS is a 503/504, not a 401.
 */
export async function verifyBearerToken(token: string, options: VerifyOptions): Promise<JWTPayload> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch (cause) {
    throw new UnauthorizedError('The bearer token is malformed.', cause);
  }
  if (typeof kid !== 'string' || kid === '') throw new UnauthorizedError('The bearer token has no key id.');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, options.keys, {
      issuer: options.issuer,
      algorithms: RSA_ALGORITHMS,
      requiredClaims: ['exp'],
    }));
  } catch (cause) {
    throw refusal(cause);
  }
  const aud = payload.aud;
  const audiences = aud === undefined ? [] : Array.isArray(aud) ? aud : [aud];
  const audienceOk =
    audiences.length > 0 ? audiences.includes(options.audience) : payload.client_id === options.audience;
  if (!audienceOk) throw new UnauthorizedError('The bearer token is not for this service (audience).');
  return payload;
}

function refusal(cause: unknown): Error {
  if (cause instanceof joseErrors.JWTExpired) return new UnauthorizedError('The bearer token has expired.', cause);
  if (cause instanceof joseErrors.JWTClaimValidationFailed) {
    return new UnauthorizedError(`The bearer token's "${cause.claim}" claim is not acceptable.`, cause);
  }
  if (cause instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new UnauthorizedError('The bearer token signature is invalid.', cause);
  }
  if (cause instanceof joseErrors.JWKSNoMatchingKey) return new UnauthorizedError('The bearer token was signed by an unknown key.', cause);
  if (cause instanceof joseErrors.JOSEAlgNotAllowed) return new UnauthorizedError('The bearer token uses a refused algorithm.', cause);
  if (cause instanceof joseErrors.JWKSTimeout) return new GatewayTimeoutError('The token keys could not be fetched in time; try again.', cause);
  if (cause instanceof joseErrors.JOSEError && cause.code === 'ERR_JWKS_INVALID') {
    return new ServiceUnavailableError('The token keys are unavailable right now; try again later.', cause);
  }
  if (cause instanceof joseErrors.JOSEError) return new UnauthorizedError('The bearer token is invalid.', cause);
  // fetch failures of the JWKS (connection refused, DNS) are not the caller's fault.
  return new ServiceUnavailableError('The token keys are unavailable right now; try again later.', cause);
}
