import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type JWK, type JWTVerifyGetKey, SignJWT } from 'jose';

/**
 * The local JWT issuer: one RSA key pair kept under `.local/` so that `npm start`, `npm run token`
 * and the tests sign and verify with the same key. The public half is served as a JWKS.
 */
export interface LocalIssuer {
  kid: string;
  jwks: { keys: JWK[] };
  /** Its own keys as a key source, for checking the tokens it signed (the token exchange). */
  keys: JWTVerifyGetKey;
  /** The private key as a JWK, for the local authorization server, which signs with the same key (local/authorization-server.ts). */
  signingKey: JWK;
  sign(claims: TokenClaims): Promise<string>;
}

export interface TokenClaims {
  issuer: string;
  audience: string | string[] | undefined;
  tenant?: string | undefined;
  tenantClaim?: string;
  subject?: string;
  expiresInSeconds?: number;
  /** `iat` in epoch seconds; now when absent (tests sign tokens issued in the future). */
  issuedAt?: number;
  /** The OAuth scopes granted, space-separated, as the `scope` claim (RFC 9068); none when absent. */
  scope?: string | undefined;
  extra?: Record<string, unknown>;
}

export const LOCAL_DIR = process.env.LOCAL_DIR ?? '.local';
const KEY_FILE = 'issuer-key.json';
const BROKER_SECRET_FILE = 'broker-client-secret';

async function readKey(dir: string): Promise<JWK | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, KEY_FILE), 'utf8')) as JWK;
  } catch {
    return undefined;
  }
}

/** Writes a file only its owner may read, atomically (a concurrent reader sees all of it or nothing). */
async function writePrivateFile(dir: string, name: string, content: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `${name}.${process.pid}.tmp`);
  await writeFile(tmp, content, { mode: 0o600 });
  await rename(tmp, join(dir, name));
}

/**
 * The client secret of the local MCP broker, a confidential client of the local issuer: made once
 * and kept under `.local/` beside the key, so `npm start`, the CLIs and the tests agree on it.
 */
export async function localBrokerSecret(dir = LOCAL_DIR): Promise<string> {
  const read = async (): Promise<string | undefined> => {
    try {
      const secret = (await readFile(join(dir, BROKER_SECRET_FILE), 'utf8')).trim();
      return secret === '' ? undefined : secret;
    } catch {
      return undefined;
    }
  };
  const existing = await read();
  if (existing) return existing;
  await writePrivateFile(dir, BROKER_SECRET_FILE, randomBytes(32).toString('base64url'));
  return (await read()) as string;
}

/** Loads the issuer key from `dir`, creating it atomically on first use. */
export async function localIssuer(dir = LOCAL_DIR): Promise<LocalIssuer> {
  let jwk = await readKey(dir);
  if (!jwk) {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
    const fresh = { ...(await exportJWK(privateKey)), kid: `local-${Date.now().toString(36)}`, alg: 'RS256', use: 'sig' };
    await writePrivateFile(dir, KEY_FILE, JSON.stringify(fresh));
    jwk = (await readKey(dir)) ?? fresh;
  }
  const kid = String(jwk.kid);
  const privateKey = await importJWK(jwk, 'RS256');
  const { n, e } = jwk;
  const publicJwk: JWK = { kty: 'RSA', n, e, kid, alg: 'RS256', use: 'sig' };
  const localKeys = createLocalJWKSet({ keys: [publicJwk] });
  return {
    kid,
    jwks: { keys: [publicJwk] },
    signingKey: { ...jwk, kid, alg: 'RS256', use: 'sig' },
    keys: localKeys,
    async sign(c: TokenClaims): Promise<string> {
      const payload: Record<string, unknown> = { ...(c.scope !== undefined ? { scope: c.scope } : {}), ...c.extra };
      if (c.tenant !== undefined) payload[c.tenantClaim ?? 'tenant_id'] = c.tenant;
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT(payload)
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuer(c.issuer)
        .setSubject(c.subject ?? 'local-user')
        .setIssuedAt(c.issuedAt ?? now)
        .setExpirationTime(now + (c.expiresInSeconds ?? 3600));
      if (c.audience !== undefined) jwt.setAudience(c.audience);
      return jwt.sign(privateKey);
    },
  };
}
