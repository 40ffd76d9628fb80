import { describe, expect, it } from 'vitest';
import { grantedScopes, hasScope } from '../../lib/auth/scopes.js';

/**
 * The scope claim read as RFC 6749 §3.3 writes it: `scope` is scope tokens separated by single
 * spaces (U+0020) and nothing else; `scp` keeps its Entra ID and Okta forms (a string or an array).
 */
describe('Function: grantedScopes', () => {
  it.each([
    ['`scope`, space-separated', { scope: 'openid endpoints:read' }, ['openid', 'endpoints:read']],
    [
      '`scope` with a doubled or an outer space (empty entries are none)',
      { scope: ' openid  endpoints:read ' },
      ['openid', 'endpoints:read'],
    ],
    ['`scp` as a string (Entra ID)', { scp: 'Endpoints.Read profile' }, ['Endpoints.Read', 'profile']],
    ['`scp` as an array (Okta)', { scp: ['profile', 'endpoints:read'] }, ['profile', 'endpoints:read']],
    ['`scope` before `scp` when a token has both', { scope: 'a', scp: ['b'] }, ['a']],
  ])('reads %s', (_what, claims, scopes) => {
    expect(grantedScopes(claims)).toEqual(scopes);
  });

  it.each([
    ['a tab', 'openid\tendpoints:read'],
    ['a line feed', 'openid\nendpoints:read'],
    ['a no-break space (U+00A0)', 'openid\u00a0endpoints:read'],
    ['an ideographic space (U+3000)', 'openid\u3000endpoints:read'],
    ['an em space (U+2003)', 'openid\u2003endpoints:read'],
  ])('separates nothing at %s: the token holding it is no scope token, and grants nothing', (_what, scope) => {
    expect(grantedScopes({ scope })).toEqual([]);
    expect(hasScope({ scope }, 'endpoints:read')).toBe(false);
  });

  it('keeps the scope tokens around one that holds a tab', () => {
    expect(grantedScopes({ scope: 'profile openid\tendpoints:read email' })).toEqual(['profile', 'email']);
  });

  it('takes a JSON array in `scope` for no scope string: nothing granted, not even through `scp`', () => {
    expect(grantedScopes({ scope: ['endpoints:read'] })).toEqual([]);
    expect(grantedScopes({ scope: ['endpoints:read'], scp: ['endpoints:read'] })).toEqual([]);
    expect(hasScope({ scope: ['openid', 'endpoints:read'] }, 'endpoints:read')).toBe(false);
  });

  it.each([
    ['a number', { scope: 1 }],
    ['an object', { scope: { 'endpoints:read': true } }],
    ['null', { scope: null }],
    ['`scp` as an object', { scp: { read: true } }],
    ['no claim at all', {}],
  ])('grants nothing for a claim that is %s', (_what, claims) => {
    expect(grantedScopes(claims)).toEqual([]);
  });

  it('keeps only the scope tokens of an `scp` array (an entry with a space, a quote or a tab is none)', () => {
    expect(grantedScopes({ scp: ['endpoints:read extra', 'a"b', 'c\td', '', 7, 'profile'] })).toEqual(['profile']);
  });

  it('reads the claim SCOPE_CLAIM names, as a string or an array, and no other', () => {
    expect(grantedScopes({ permissions: ['endpoints:read'], scope: 'other' }, 'permissions')).toEqual(['endpoints:read']);
    expect(grantedScopes({ permissions: 'endpoints:read other' }, 'permissions')).toEqual(['endpoints:read', 'other']);
    expect(grantedScopes({ scope: 'endpoints:read' }, 'permissions')).toEqual([]);
  });

  it('holds `scope` to its string form even when SCOPE_CLAIM names it', () => {
    expect(grantedScopes({ scope: ['endpoints:read'] }, 'scope')).toEqual([]);
    expect(grantedScopes({ scope: 'endpoints:read' }, 'scope')).toEqual(['endpoints:read']);
  });
});

describe('Function: hasScope', () => {
  it('asks nothing when no scope is required', () => {
    expect(hasScope({}, undefined)).toBe(true);
  });

  it('matches a whole scope token, never a prefix of one', () => {
    expect(hasScope({ scope: 'endpoints:readonly' }, 'endpoints:read')).toBe(false);
    expect(hasScope({ scope: 'endpoints:read' }, 'endpoints:read')).toBe(true);
  });
});
