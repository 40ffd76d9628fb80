import { type CryptoKey, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { type KeySource, verifyBearerToken } from '../../lib/auth/verify.js';

describe('Function: verifyBearerToken', () => {
  let privateKey: CryptoKey;
  let keys: KeySource;
  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    keys = { getKey: async () => pair.publicKey };
  });

  const tokenFrom = (issuer: string): Promise<string> =>
    new SignJWT({ tenant_id: 'acme' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience('inventory')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);

  it('accepts a token of the expected issuer and audience', async () => {
    const claims = await verifyBearerToken(await tokenFrom('https://issuer.example.com/'), {
      issuer: 'https://issuer.example.com/',
      audience: 'inventory',
      keys,
    });

    expect(claims).toMatchObject({ iss: 'https://issuer.example.com/', tenant_id: 'acme' });
  });

  it('names the issuer it accepts, and never the one the token claims, when the issuers differ', async () => {
    const token = await tokenFrom('https://other-issuer.example.net/');

    const refused = verifyBearerToken(token, { issuer: 'https://issuer.example.com/', audience: 'inventory', keys });

    await expect(refused).rejects.toMatchObject({
      statusCode: 401,
      message: 'The bearer token\'s "iss" claim is not the issuer this service accepts, "https://issuer.example.com/".',
    });
    await expect(refused).rejects.not.toThrow(/other-issuer/);
  });

  it('names a loopback issuer as it names any other, with nothing of a local stack in its words', async () => {
    const token = await tokenFrom('http://localhost:3000');

    const refused = verifyBearerToken(token, { issuer: 'http://localhost:4500', audience: 'inventory', keys });

    await expect(refused).rejects.toMatchObject({
      statusCode: 401,
      message: 'The bearer token\'s "iss" claim is not the issuer this service accepts, "http://localhost:4500".',
    });
  });
});
