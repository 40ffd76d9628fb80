import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWTVerifyGetKey, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkToken, issuerKeys, refusalOfHeader } from '../../local/token-check.js';

/**
 * The local stack's own reading of a token (the token exchange's subject token; the note it adds to
 * a door's refusal): jose against the issuer's keys, each refusal in one sentence that never
 * repeats the token.
 */

describe('Function: checkToken (local/token-check.ts)', () => {
  let sign: (claims: { iss?: string; aud?: string; exp?: string | number; kid?: string | null; client_id?: string }) => Promise<string>;
  let keys: JWTVerifyGetKey;
  const expected = (): { issuer: string; audience: string; keys: JWTVerifyGetKey } => ({
    issuer: 'http://localhost:4500',
    audience: 'inventory',
    keys,
  });

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] });
    sign = (claims) => {
      const jwt = new SignJWT({ tenant_id: 'acme', ...(claims.client_id ? { client_id: claims.client_id } : {}) })
        .setProtectedHeader({ alg: 'RS256', ...(claims.kid === null ? {} : { kid: claims.kid ?? 'k1' }) })
        .setIssuer(claims.iss ?? 'http://localhost:4500')
        .setIssuedAt()
        .setExpirationTime(claims.exp ?? '5m');
      if (claims.aud !== undefined) jwt.setAudience(claims.aud);
      return jwt.sign(privateKey);
    };
  });

  it('returns the claims of a token of the expected issuer and audience (`aud`, or else `client_id`)', async () => {
    expect(await checkToken(await sign({ aud: 'inventory' }), expected())).toMatchObject({ tenant_id: 'acme' });
    expect(await checkToken(await sign({ client_id: 'inventory' }), expected())).toMatchObject({ client_id: 'inventory' });
  });

  it("says how to match this stack's issuer, for a token made for another PORT", async () => {
    const token = await sign({ iss: 'http://localhost:3000', aud: 'inventory' });

    await expect(checkToken(token, expected())).rejects.toMatchObject({
      otherIssuer: true,
      message:
        'The bearer token\'s "iss" claim is not the issuer this service accepts, "http://localhost:4500"; make local tokens with the PORT (and JWT_ISSUER) that npm start runs with.',
    });
  });

  it.each([
    ['another audience', { aud: 'mcp' }, 'The bearer token is not for this service (audience).'],
    ['an expired token', { aud: 'inventory', exp: Math.floor(Date.now() / 1000) - 60 }, 'The bearer token has expired.'],
    ['no key id', { aud: 'inventory', kid: null }, 'The bearer token has no key id.'],
  ] as const)('refuses %s in one sentence', async (_what, claims, sentence) => {
    await expect(checkToken(await sign(claims), expected())).rejects.toMatchObject({
      name: 'TokenRefusal',
      otherIssuer: false,
      message: sentence,
    });
  });

  it('words a header that is no bearer token, and a token that is no JWT, without repeating either', async () => {
    expect((await refusalOfHeader('Basic dXNlcjpwYXNz', expected()))?.message).toBe('The Authorization header is not a bearer token.');
    expect((await refusalOfHeader('Bearer not.a.jwt', expected()))?.message).toBe('The bearer token is malformed.');
    expect(await refusalOfHeader(`Bearer ${await sign({ aud: 'inventory' })}`, expected())).toBeUndefined();
  });
});

describe('Function: issuerKeys (local/token-check.ts)', () => {
  it('refuses an issuer whose discovery document is an error page with its one sentence, not a JSON parse error', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/html' });
      res.end('<html><body>Bad gateway</body></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await expect(issuerKeys(issuer, undefined)).rejects.toThrow(`the discovery document of ${issuer} names no key set of that issuer`);
    } finally {
      server.close();
    }
  });
});
