import { describe, expect, it } from 'vitest';
import { DiscoveryError, discoveryUrls, isAbsentDocument, jwksUriOf } from '../../lib/auth/discovery.js';

describe('Function: discoveryUrls', () => {
  it.each([
    [
      'an issuer without a path (ZITADEL, Auth0 with its trailing slash)',
      'https://auth.example.com/',
      ['https://auth.example.com/.well-known/openid-configuration', 'https://auth.example.com/.well-known/oauth-authorization-server'],
    ],
    [
      'an issuer with a path (Keycloak): appended for OpenID Connect, inserted after the host for RFC 8414',
      'https://sso.example.com/realms/acme',
      [
        'https://sso.example.com/realms/acme/.well-known/openid-configuration',
        'https://sso.example.com/.well-known/oauth-authorization-server/realms/acme',
      ],
    ],
    [
      'an issuer with a path and a terminating slash, which is removed first',
      'https://login.example.com/tenant/v2.0/',
      [
        'https://login.example.com/tenant/v2.0/.well-known/openid-configuration',
        'https://login.example.com/.well-known/oauth-authorization-server/tenant/v2.0',
      ],
    ],
    [
      'a development issuer on http with a port',
      'http://localhost:3000',
      ['http://localhost:3000/.well-known/openid-configuration', 'http://localhost:3000/.well-known/oauth-authorization-server'],
    ],
  ])('%s', (_what, issuer, urls) => {
    expect(discoveryUrls(issuer)).toEqual(urls);
  });
});

describe('Function: isAbsentDocument', () => {
  it.each([
    [404, true],
    [403, true],
    [410, true],
    [400, true],
    [408, false],
    [429, false],
    [500, false],
    [503, false],
    [200, false],
    [302, false],
  ])('%s → %s', (status, absent) => {
    expect(isAbsentDocument(status)).toBe(absent);
  });
});

describe('Function: jwksUriOf', () => {
  const ISSUER = 'https://sso.example.com/realms/acme';
  const CERTS = 'https://sso.example.com/realms/acme/protocol/openid-connect/certs';

  it("returns the document's jwks_uri when the document is the issuer's", () => {
    expect(jwksUriOf({ issuer: ISSUER, jwks_uri: CERTS }, ISSUER)).toBe(CERTS);
  });

  it('takes an http jwks_uri from an http issuer (a development issuer on this machine)', () => {
    expect(jwksUriOf({ issuer: 'http://localhost:3000', jwks_uri: 'http://localhost:3000/oauth2/jwks' }, 'http://localhost:3000')).toBe(
      'http://localhost:3000/oauth2/jwks',
    );
  });

  it.each([
    [
      'another issuer',
      { issuer: 'https://sso.example.com/realms/other', jwks_uri: CERTS },
      'names the issuer "https://sso.example.com/realms/other"',
    ],
    ['the issuer with a trailing slash it does not have', { issuer: `${ISSUER}/`, jwks_uri: CERTS }, 'not the configured'],
    ['no issuer', { jwks_uri: CERTS }, 'names the issuer undefined'],
    ['no jwks_uri', { issuer: ISSUER }, 'names no jwks_uri URL'],
    ['a jwks_uri that is no URL', { issuer: ISSUER, jwks_uri: 'certs' }, 'names no jwks_uri URL'],
    ['an http jwks_uri for an https issuer', { issuer: ISSUER, jwks_uri: 'http://sso.example.com/certs' }, 'is not https (http:)'],
    ['a jwks_uri of another scheme', { issuer: ISSUER, jwks_uri: 'file:///etc/keys.json' }, 'is not https (file:)'],
    ['an array', [{ issuer: ISSUER, jwks_uri: CERTS }], 'is not a JSON object'],
    ['null', null, 'is not a JSON object'],
    ['a string', 'issuer', 'is not a JSON object'],
  ])('refuses a document with %s', (_what, document, reason) => {
    expect(() => jwksUriOf(document, ISSUER)).toThrow(DiscoveryError);
    expect(() => jwksUriOf(document, ISSUER)).toThrow(reason);
  });
});
