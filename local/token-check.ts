import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';

/**
 * The stack's own reading of a bearer token, with jose: where the local authorization server
 * checks a token it issued (the token exchange's subject token), and where the local gateway says
 * why a door refused one, which API Gateway's own answer cannot say (docs/mcp.md). The functions
 * verify every token themselves (lib/auth/verify.ts); this only words a refusal for a person
 * working with the stack, and never lets anything through. A copy of the service's check (the stack
 * takes nothing of lib/auth): test/unit/boundary-copies.test.ts holds the two to the same verdict
 * and the same sentence for every kind of token.
 */

/** RSA signatures only, as the service's authorizer accepts. */
const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];

/** How far in the future `iat` may lie, as the service allows (clocks differ a little). */
const ISSUED_AT_SKEW_SECONDS = 60;

/** What the token must carry: the issuer exactly, and the audience in `aud` (or else `client_id`). */
export interface TokenExpectation {
  issuer: string;
  audience: string;
  keys: JWTVerifyGetKey;
}

/** A token that does not pass, with the sentence that says why (never the token itself). */
export class TokenRefusal extends Error {
  override name = 'TokenRefusal';
  constructor(
    message: string,
    /** The token names another issuer than the one expected (a token made for another PORT or JWT_ISSUER). */
    readonly otherIssuer = false,
  ) {
    super(message);
  }
}

/** The hint for a token from another issuer, which locally is mostly one made for another port. */
export const OTHER_ISSUER_HINT = 'make local tokens with the PORT (and JWT_ISSUER) that npm start runs with';

/** The refusal a check's error stands for; anything that is no fault of the token (the key set unreachable) is thrown as it is. */
function refusalOf(error: unknown, issuer: string): TokenRefusal {
  if (error instanceof TokenRefusal) return error;
  if (!(error instanceof errors.JOSEError) || error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) throw error;
  if (error instanceof errors.JWTExpired) return new TokenRefusal('The bearer token has expired.');
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'iss')
    return new TokenRefusal(
      `The bearer token's "iss" claim is not the issuer this service accepts, "${issuer}"; ${OTHER_ISSUER_HINT}.`,
      true,
    );
  if (error instanceof errors.JWTClaimValidationFailed)
    return new TokenRefusal(`The bearer token's "${error.claim}" claim is not acceptable.`);
  if (error instanceof errors.JWSSignatureVerificationFailed) return new TokenRefusal('The bearer token signature is invalid.');
  if (error instanceof errors.JWKSNoMatchingKey) return new TokenRefusal('The bearer token was signed by an unknown key.');
  if (error instanceof errors.JOSEAlgNotAllowed) return new TokenRefusal('The bearer token uses a refused algorithm.');
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return new TokenRefusal('The bearer token is malformed.');
  return new TokenRefusal('The bearer token is invalid.');
}

/**
 * The token's claims when it passes what the service's authorizer checks of a token (RSA, `kid`,
 * `iss`, the audience, `exp`, `nbf`, `iat` at most a minute ahead); else a TokenRefusal with its sentence.
 */
export async function checkToken(token: string, expected: TokenExpectation): Promise<JWTPayload> {
  try {
    const { payload, protectedHeader } = await jwtVerify(token, expected.keys, {
      issuer: expected.issuer,
      algorithms: RSA_ALGORITHMS,
      requiredClaims: ['exp'],
    });
    if (typeof protectedHeader.kid !== 'string' || protectedHeader.kid === '') throw new TokenRefusal('The bearer token has no key id.');
    if (typeof payload.iat === 'number' && payload.iat > Math.floor(Date.now() / 1000) + ISSUED_AT_SKEW_SECONDS)
      throw new TokenRefusal('The bearer token was issued in the future.');
    const audiences = [payload.aud ?? []].flat();
    const audienceOk = audiences.length > 0 ? audiences.includes(expected.audience) : payload.client_id === expected.audience;
    if (!audienceOk) throw new TokenRefusal('The bearer token is not for this service (audience).');
    return payload;
  } catch (error) {
    throw refusalOf(error, expected.issuer);
  }
}

/** Why an `Authorization` header's token does not pass, in one sentence; undefined when it does, or when it could not be checked. */
export async function refusalOfHeader(authorization: string, expected: TokenExpectation): Promise<TokenRefusal | undefined> {
  const token = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(authorization.trim())?.[1];
  if (!token) return new TokenRefusal('The Authorization header is not a bearer token.');
  try {
    await checkToken(token, expected);
    return undefined;
  } catch (error) {
    return error instanceof TokenRefusal ? error : undefined;
  }
}

/** How long the stack waits for an issuer's discovery document or keys, as the functions do for one fetch. */
const ISSUER_FETCH_MS = 2_000;

/**
 * The issuer's keys as the functions find them: at `jwksUrl` when one is given, else at the
 * `jwks_uri` of the issuer's OpenID Connect discovery document, which must name the issuer
 * exactly. The stack reads it itself (it takes nothing of the service's lib/auth); a document it
 * cannot use is thrown, and the caller has no note to add.
 */
export async function issuerKeys(issuer: string, jwksUrl: string | undefined): Promise<JWTVerifyGetKey> {
  if (jwksUrl !== undefined) return createRemoteJWKSet(new URL(jwksUrl), { timeoutDuration: ISSUER_FETCH_MS });
  const answer = await fetch(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, {
    signal: AbortSignal.timeout(ISSUER_FETCH_MS),
  });
  // An error page is no document: its status is read before its body is taken for JSON.
  const document = answer.ok ? ((await answer.json().catch(() => ({}))) as { issuer?: unknown; jwks_uri?: unknown }) : {};
  if (document.issuer !== issuer || typeof document.jwks_uri !== 'string') {
    throw new Error(`the discovery document of ${issuer} names no key set of that issuer`);
  }
  return createRemoteJWKSet(new URL(document.jwks_uri), { timeoutDuration: ISSUER_FETCH_MS });
}
