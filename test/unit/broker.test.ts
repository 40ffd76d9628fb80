import { describe, expect, it } from 'vitest';
import { assertAllowedBroker, BROKER_REFUSALS, brokerOf, claimAt } from '../../lib/auth/broker.js';
import { insufficientScope } from '../../lib/auth/challenge.js';

/** Claims as an RFC 8693 token exchange writes them: the user as `sub`, the broker as actor. */
const exchanged = { sub: 'alice', tenant_id: 'acme', aud: 'endpoint-observations', act: { sub: 'mcp-broker' }, azp: 'mcp-app' };

describe('Function: claimAt', () => {
  it.each([
    ['act.sub', 'mcp-broker'],
    ['azp', 'mcp-app'],
    ['sub', 'alice'],
  ])('reads %s', (path, value) => {
    expect(claimAt(exchanged, path)).toBe(value);
  });

  it.each([
    ['a missing claim', {}, 'act.sub'],
    ['an actor without sub', { act: {} }, 'act.sub'],
    ['an empty actor', { act: { sub: '  ' } }, 'act.sub'],
    ['an actor that is a string', { act: 'mcp-broker' }, 'act.sub'],
    ['an actor that is an array', { act: [{ sub: 'mcp-broker' }] }, 'act.0.sub'],
    ['a number', { azp: 42 }, 'azp'],
    ['a step through the prototype', { act: {} }, 'act.constructor'],
  ])('gives undefined for %s', (_what, claims, path) => {
    expect(claimAt(claims as Record<string, unknown>, path)).toBeUndefined();
  });

  it('takes the current actor, not an earlier one in a delegation chain (RFC 8693 §4.1)', () => {
    expect(claimAt({ act: { sub: 'mcp-broker', act: { sub: 'older-actor' } } }, 'act.sub')).toBe('mcp-broker');
  });
});

describe('Function: assertAllowedBroker', () => {
  it('admits a broker named on the allow-list', () => {
    expect(assertAllowedBroker(brokerOf(exchanged, 'act.sub'), ['other', 'mcp-broker'])).toBe('mcp-broker');
  });

  it('refuses a passed-through user token (no actor) with 403 and says why', () => {
    const userToken = { sub: 'alice', tenant_id: 'acme', aud: 'endpoint-observations' };

    expect(() => assertAllowedBroker(brokerOf(userToken, 'act.sub'), ['mcp-broker'])).toThrow(
      expect.objectContaining({ statusCode: 403, message: BROKER_REFUSALS.missing }),
    );
  });

  it.each([
    ['another client', ['other-broker']],
    ['a prefix of the name', ['mcp']],
    ['an empty allow-list', []],
  ])('refuses with 403 when the allow-list holds %s', (_how, list) => {
    expect(() => assertAllowedBroker('mcp-broker', list)).toThrow(
      expect.objectContaining({ statusCode: 403, message: BROKER_REFUSALS.notAllowed }),
    );
  });
});

describe('Constant: BROKER_REFUSALS.scope', () => {
  it("begins the private operation's refusal of a token without its scope, which the MCP door reads as its own misconfiguration", () => {
    const refusal = insufficientScope(undefined, 'observations:read', 'the broker asks for it');

    expect(refusal.statusCode).toBe(403);
    expect(refusal.message.startsWith(BROKER_REFUSALS.scope)).toBe(true);
    expect(refusal.headers['WWW-Authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="observations:read", error_description="The token lacks the scope observations:read."',
    );
  });
});
