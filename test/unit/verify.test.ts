import { type CryptoKey, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearerToken, type KeySource, verifyBearerToken } from '../../lib/auth/verify.js';
import type { HttpError } from '../../lib/errors.js';

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

  describe('RFC 6750 §3.1: the challenge of a token that was sent and failed', () => {
    const refusalOf = async (token: Promise<string> | string): Promise<HttpError> => {
      try {
        await verifyBearerToken(await token, { issuer: 'https://issuer.example.com/', audience: 'inventory', keys });
      } catch (error) {
        return error as HttpError;
      }
      throw new Error('the token was accepted');
    };
    const signed = (build: (jwt: SignJWT) => SignJWT, key: () => CryptoKey = () => privateKey): Promise<string> =>
      build(
        new SignJWT({ tenant_id: 'acme' })
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setIssuer('https://issuer.example.com/')
          .setAudience('inventory')
          .setIssuedAt()
          .setExpirationTime('5m'),
      ).sign(key());
    let otherKey: CryptoKey;
    beforeAll(async () => {
      otherKey = (await generateKeyPair('RS256')).privateKey;
    });

    it.each([
      ['a malformed token', () => 'not.a.jwt', 'The bearer token is malformed.'],
      [
        'an expired token',
        () => signed((jwt) => jwt.setExpirationTime(Math.floor(Date.now() / 1000) - 60)),
        'The bearer token has expired.',
      ],
      [
        'a token signed by another key',
        () =>
          signed(
            (jwt) => jwt,
            () => otherKey,
          ),
        'The bearer token signature is invalid.',
      ],
      [
        'a token for another audience',
        () => signed((jwt) => jwt.setAudience('elsewhere')),
        'The bearer token is not for this service (audience).',
      ],
      [
        'a token of another issuer',
        () => signed((jwt) => jwt.setIssuer('https://elsewhere.example.net/')),
        'The bearer token\'s "iss" claim is not the issuer this service accepts, "https://issuer.example.com/".',
      ],
      [
        'an unsigned token (alg none)',
        () =>
          new UnsecuredJWT({ tenant_id: 'acme' })
            .setIssuer('https://issuer.example.com/')
            .setAudience('inventory')
            .setExpirationTime('5m')
            .encode(),
        'The bearer token has no key id.',
      ],
    ])('answers %s with error="invalid_token" and its sentence as the description', async (_what, token, sentence) => {
      const error = await refusalOf(token());

      expect(error.statusCode).toBe(401);
      expect(error.message).toBe(sentence);
      expect(error.headers['WWW-Authenticate']).toBe(`Bearer error="invalid_token", error_description="${sentence.replace(/"/g, "'")}"`);
    });
  });
});

describe('Function: bearerToken', () => {
  const challengeOf = (header: string | undefined): string | undefined => {
    try {
      bearerToken(header);
    } catch (error) {
      return (error as HttpError).headers['WWW-Authenticate'];
    }
    return undefined;
  };

  it('takes the token of a Bearer header, whatever the case of the scheme', () => {
    expect(bearerToken('bearer abc.def.ghi')).toBe('abc.def.ghi');
  });

  it('answers no token, or another scheme, with the bare challenge: no bearer token was sent (RFC 6750 §3.1)', () => {
    expect(challengeOf(undefined)).toBe('Bearer');
    expect(challengeOf('  ')).toBe('Bearer');
    expect(challengeOf('Basic dXNlcjpwYXNz')).toBe('Bearer');
  });

  it('answers a Bearer header holding no token as a sent token refused, invalid_token', () => {
    expect(challengeOf('Bearer')).toBe('Bearer error="invalid_token", error_description="The bearer token is malformed."');
    expect(challengeOf('Bearer not a token')).toBe('Bearer error="invalid_token", error_description="The bearer token is malformed."');
  });
});
