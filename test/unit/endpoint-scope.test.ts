import type { APIGatewayProxyEvent } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { restRequest } from '../../functions/rest-event.js';
import { authorizerContextOf, callerFromAuthorizer as callerOf } from '../../lib/auth/caller.js';
import {
  ALL_ENDPOINTS,
  assertScopeAllowed,
  auditedScope,
  badScopeClaimSentence,
  type EndpointScope,
  readScopeClaim,
  sameScope,
  scopeAdmits,
  scopeContextValue,
  scopeFromContextValue,
  scopeRequiredSentence,
  UNSCOPED,
} from '../../lib/auth/endpoint-scope.js';
import { HttpError } from '../../lib/errors.js';
import { eventFixture } from '../helpers/events.js';

/** The caller an event's authorizer context names, read as the handlers read it: from the event's request. */
const callerFromAuthorizer = (
  event: APIGatewayProxyEvent,
  ...rest: Parameters<typeof callerOf> extends [unknown, ...infer R] ? R : never
) => callerOf(restRequest(event), ...rest);

/**
 * The endpoint scope claim (ENDPOINT_SCOPE_CLAIM): how a token's claim is read, what it lets a
 * caller see, and how it travels through the token authorizer's context to the handlers.
 */

const groupsOf = (scope: EndpointScope | 'invalid'): string[] | string =>
  scope === 'invalid' ? 'invalid' : scope.kind === 'groups' ? [...scope.groups].sort() : scope.kind;

/** Group names as issuers write them: any characters but the space (the separator of the string form), 1 to 128 of them. */
const groupName = fc
  .string({ minLength: 1, maxLength: 128, unit: 'grapheme' })
  .filter((g) => !g.includes(' ') && g !== '*' && [...g].length <= 128);

describe('Function: readScopeClaim', () => {
  it.each<[string, unknown, string[] | string]>([
    ['no claim: the whole tenant', undefined, 'unscoped'],
    ['a JSON array of names', ['emea', 'servers'], ['emea', 'servers']],
    ['one string of names separated by spaces', 'emea servers', ['emea', 'servers']],
    ['a string with runs of spaces', '  emea   servers ', ['emea', 'servers']],
    ['one name', 'emea', ['emea']],
    ['a name given twice', ['emea', 'emea'], ['emea']],
    ['"*"', '*', 'all'],
    ['"*" in an array', ['*'], 'all'],
    ['"*" among names', ['emea', '*'], 'all'],
    ['a name of 128 characters', ['x'.repeat(128)], ['x'.repeat(128)]],
    ['a name of 128 characters outside the BMP', ['😀'.repeat(128)], ['😀'.repeat(128)]],
    ['non-ASCII names', ['münchen', '東京'], ['münchen', '東京']],
  ])('reads %s', (_what, claim, expected) => {
    expect(groupsOf(readScopeClaim(claim))).toEqual(expected);
  });

  it.each<[string, unknown]>([
    ['a number', 42],
    ['a boolean', true],
    ['null', null],
    ['an object', { groups: ['emea'] }],
    ['an empty array', []],
    ['an empty string', ''],
    ['a string of spaces', '   '],
    ['an array with a number', ['emea', 1]],
    ['an array with an empty name', ['emea', '']],
    ['an array with an array', [['emea']]],
    ['a name of 129 characters', ['x'.repeat(129)]],
    ['a name of 129 characters in the string form', `emea ${'x'.repeat(129)}`],
  ])('refuses %s as a bad claim', (_what, claim) => {
    expect(readScopeClaim(claim)).toBe('invalid');
  });

  it('reads the string form and the array form of the same names as the same scope (property)', () => {
    fc.assert(
      fc.property(fc.array(groupName, { minLength: 1, maxLength: 8 }), (names) => {
        const fromArray = readScopeClaim(names);
        const fromString = readScopeClaim(names.join(' '));
        expect(sameScope(fromArray, fromString)).toBe(true);
        expect(groupsOf(fromArray)).toEqual([...new Set(names)].sort());
      }),
    );
  });

  it('never throws, and reads anything that is not a list of names as a bad claim (property)', () => {
    fc.assert(
      fc.property(fc.anything(), (claim) => {
        const scope = readScopeClaim(claim);
        const names = typeof claim === 'string' ? claim.split(' ').filter(Boolean) : Array.isArray(claim) ? claim : undefined;
        const valid =
          claim === undefined ||
          (names !== undefined && names.length > 0 && names.every((n) => typeof n === 'string' && n !== '' && [...n].length <= 128));
        expect(scope === 'invalid').toBe(!valid);
      }),
    );
  });

  it('names the claim in the one sentence of a bad claim and of a missing one', () => {
    expect(badScopeClaimSentence('groups')).toBe(
      'The token\'s "groups" claim must be "*" or endpoint group names: a list of strings, or one string of names separated by spaces, each 1 to 128 characters.',
    );
    expect(scopeRequiredSentence('groups')).toBe('This tenant requires an endpoint scope: the token must carry the "groups" claim.');
  });
});

describe('Function: scopeAdmits', () => {
  const emeaOrKiosks = readScopeClaim(['emea', 'kiosks']) as EndpointScope;

  it.each<[string, readonly string[] | undefined, boolean]>([
    ['an endpoint in one of the groups', ['emea', 'servers'], true],
    ['an endpoint in the other group', ['kiosks'], true],
    ['an endpoint in other groups only', ['americas', 'servers'], false],
    ['an endpoint in no group', undefined, false],
    ['an endpoint whose group differs only in case', ['EMEA'], false],
  ])('lets a scoped caller see %s: %s', (_what, groups, seen) => {
    expect(scopeAdmits(emeaOrKiosks, groups)).toBe(seen);
  });

  it('lets unscoped and "*" callers see every endpoint, groups or none', () => {
    for (const scope of [UNSCOPED, ALL_ENDPOINTS]) {
      expect([scopeAdmits(scope, undefined), scopeAdmits(scope, ['americas'])]).toEqual([true, true]);
    }
  });

  it('admits exactly the endpoints sharing a group with the caller (property)', () => {
    fc.assert(
      fc.property(
        fc.array(groupName, { minLength: 1, maxLength: 5 }),
        fc.option(fc.array(groupName, { maxLength: 5 }), { nil: undefined }),
        (caller, endpoint) => {
          const scope = readScopeClaim(caller) as EndpointScope;
          expect(scopeAdmits(scope, endpoint)).toBe((endpoint ?? []).some((g) => caller.includes(g)));
        },
      ),
    );
  });
});

describe('Function: assertScopeAllowed', () => {
  it('refuses a caller without the claim at a tenant that requires a scope with 403 naming the claim, and lets every scoped caller through', () => {
    const refused = (() => {
      try {
        assertScopeAllowed(UNSCOPED, { scope: 'required' }, 'endpoint_groups');
      } catch (error) {
        return error;
      }
      return undefined;
    })();

    expect(refused).toBeInstanceOf(HttpError);
    expect(refused).toMatchObject({ name: 'ForbiddenError', statusCode: 403 });
    expect((refused as HttpError).message).toBe(
      'This tenant requires an endpoint scope: the token must carry the "endpoint_groups" claim.',
    );
    expect(() => assertScopeAllowed(ALL_ENDPOINTS, { scope: 'required' }, 'endpoint_groups')).not.toThrow();
    expect(() => assertScopeAllowed(readScopeClaim('emea') as EndpointScope, { scope: 'required' }, 'endpoint_groups')).not.toThrow();
    expect(() => assertScopeAllowed(UNSCOPED, { scope: 'optional' }, 'endpoint_groups')).not.toThrow();
  });
});

describe("The scope through the token authorizer's context", () => {
  const NOW = Math.floor(Date.now() / 1000);
  const cfg = { tenantClaim: 'tenant_id', scopeClaim: 'endpoint_groups', publicUrl: 'https://api.example.com', requiredScope: undefined };
  const through = (claims: Record<string, unknown>) => {
    // API Gateway hands every context value on as a string.
    const context = authorizerContextOf({ tenant_id: 'acme', sub: 'u', exp: NOW + 60, ...claims }, cfg.tenantClaim, cfg.scopeClaim);
    const event = eventFixture<APIGatewayProxyEvent>('rest-api', 'list-agents', (e) => {
      e.requestContext.authorizer = { principalId: 'u', ...Object.fromEntries(Object.entries(context).map(([k, v]) => [k, String(v)])) };
    });
    return callerFromAuthorizer(event, 'inventory', cfg);
  };

  it('hands the handler the scope the token carries, in either form, and none for a token without the claim', () => {
    expect(groupsOf(through({ endpoint_groups: ['emea', 'servers'] }).scope)).toEqual(['emea', 'servers']);
    expect(groupsOf(through({ endpoint_groups: 'servers emea' }).scope)).toEqual(['emea', 'servers']);
    expect(groupsOf(through({ endpoint_groups: '*' }).scope)).toBe('all');
    expect(groupsOf(through({}).scope)).toBe('unscoped');
    expect(authorizerContextOf({ tenant_id: 'acme', sub: 'u', exp: NOW }, 'tenant_id', 'endpoint_groups')).not.toHaveProperty('scope');
  });

  it('reads the claim named by ENDPOINT_SCOPE_CLAIM, and no other', () => {
    const context = authorizerContextOf(
      { tenant_id: 'acme', sub: 'u', exp: NOW, groups: ['emea'], endpoint_groups: 42 },
      'tenant_id',
      'groups',
    );

    expect(scopeFromContextValue(context.scope)).toEqual(readScopeClaim(['emea']));
  });

  it.each<[string, unknown]>([
    ['a number', 42],
    ['an empty array', []],
    ['an object', { a: 1 }],
    ['a name over 128 characters', ['y'.repeat(129)]],
  ])('refuses a token whose claim is %s with 403 naming the claim', (_what, claim) => {
    let error: unknown;
    try {
      through({ endpoint_groups: claim });
    } catch (caught) {
      error = caught;
    }

    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).statusCode).toBe(403);
    expect((error as HttpError).message).toBe(badScopeClaimSentence('endpoint_groups'));
  });

  it('reads any context value it did not write itself as a bad scope, never as the whole tenant (property)', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const scope = scopeFromContextValue(value);
        const roundTrip = scope === 'invalid' ? undefined : scopeContextValue(scope);
        // Whatever it reads, writing it again gives a value that reads the same.
        if (roundTrip !== undefined) expect(sameScope(scopeFromContextValue(roundTrip), scope)).toBe(true);
        expect(scope === 'invalid' || scope.kind !== 'unscoped').toBe(true);
      }),
    );
  });

  it('writes the scope into an audit item as null, "*", the sorted names, or "invalid"', () => {
    expect([
      auditedScope(UNSCOPED),
      auditedScope(ALL_ENDPOINTS),
      auditedScope(readScopeClaim('servers emea')),
      auditedScope('invalid'),
    ]).toEqual([null, '*', ['emea', 'servers'], 'invalid']);
  });
});
