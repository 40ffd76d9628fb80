import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentsPartition, policyKey, samplesPartition } from '../../lib/store/keys.js';
import {
  iamLiteral,
  SESSION_POLICY_MAX_CHARS,
  tenantLeadingKeysPattern,
  tenantSessionName,
  tenantSessionPolicy,
  tenantTagValue,
} from '../../lib/store/tenant-fence.js';

/**
 * IAM's `StringLike`, as its documentation defines it: `*` matches any run of characters, `?`
 * exactly one, and `${*}`, `${?}`, `${$}` the characters themselves; everything else literally.
 * Case-sensitive, whole value.
 */
function stringLike(pattern: string, value: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; ) {
    const literal = /^\$\{([*?$])\}/.exec(pattern.slice(i));
    if (literal) {
      source += `\\${literal[1]}`;
      i += literal[0].length;
      continue;
    }
    const c = pattern[i]!;
    source += c === '*' ? '[\\s\\S]*' : c === '?' ? '[\\s\\S]' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    i += 1;
  }
  return new RegExp(`^${source}$`, 'u').test(value);
}

/** Ids as tenants and agents name themselves, the awkward characters favoured. */
const id = fc.string({
  unit: fc.oneof(fc.constantFrom('*', '?', '#', '%', ' ', '$', '{', '}', '/', 'a', 'b', 'ü', '漢', '🙂', '%23', '${*}'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 2 })),
  minLength: 1,
  maxLength: 12,
});

/** Every data-table partition key the store builds for a tenant (agents, samples of an agent, policy). */
const keysOf = (tenant: string, agent: string): string[] => [agentsPartition(tenant), samplesPartition(tenant, agent), policyKey(tenant).pk];

describe('Function: tenantLeadingKeysPattern', () => {
  it('allows every partition key the store builds for the tenant (property)', () => {
    fc.assert(
      fc.property(id, id, (tenant, agent) => {
        const pattern = tenantLeadingKeysPattern(tenant);
        for (const key of keysOf(tenant, agent)) expect(stringLike(pattern, key), `${pattern} !~ ${key}`).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("never allows a partition key of another tenant (property)", () => {
    fc.assert(
      fc.property(id, id, id, (tenant, other, agent) => {
        fc.pre(tenant !== other);
        const pattern = tenantLeadingKeysPattern(tenant);
        for (const key of keysOf(other, agent)) expect(stringLike(pattern, key), `${pattern} ~ ${key}`).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });

  it.each([
    ['a*', 'ab'],
    ['a?', 'ab'],
    ['a', 'a*'],
    ['a#b', 'a'],
    ['a%23b', 'a#b'],
    ['a b', 'a'],
    ['müller', 'mu'],
    ['x$', 'x'],
  ])('fences tenant %j away from tenant %j', (tenant, other) => {
    const pattern = tenantLeadingKeysPattern(tenant);

    expect(stringLike(pattern, agentsPartition(tenant))).toBe(true);
    expect(stringLike(pattern, agentsPartition(other))).toBe(false);
    expect(stringLike(pattern, samplesPartition(other, 'x'))).toBe(false);
  });

  it('writes wildcards and $ as literal-character variables', () => {
    expect(iamLiteral('a*b?c$d')).toBe('a${*}b${?}c${$}d');
    expect(tenantLeadingKeysPattern('a*')).toBe('T#a${*}#*');
  });
});

describe('Function: tenantSessionPolicy', () => {
  it('allows only the three reads, on every partition key of the request, for the tenant', () => {
    expect(tenantSessionPolicy('acme')).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'OneTenantsPartitions',
          Effect: 'Allow',
          Action: ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem'],
          Resource: '*',
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#acme#*'] } },
        },
      ],
    });
  });

  it('fits AWS session-policy limit for tenant ids of ordinary length, whatever their characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (tenant) => {
        expect(JSON.stringify(tenantSessionPolicy(tenant)).length).toBeLessThanOrEqual(SESSION_POLICY_MAX_CHARS);
      }),
    );
  });
});

describe('Functions: tenantTagValue, tenantSessionName', () => {
  it.each(['acme', 'Contoso Ltd.', 'müller-gmbh', 'a@b:c/d=e+f_g'])('tags %j as itself', (tenant) => {
    expect(tenantTagValue(tenant)).toBe(tenant);
  });

  it.each(['a*', 'a#b', '100%', 'what?', 'x'.repeat(300), ''])('tags %j by its digest, which a tag can hold', (tenant) => {
    expect(tenantTagValue(tenant)).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
  });

  it('names the session within STS rules, the same for the same tenant', () => {
    fc.assert(
      fc.property(id, (tenant) => {
        expect(tenantSessionName(tenant)).toMatch(/^[\w+=,.@-]{2,64}$/);
        expect(tenantSessionName(tenant)).toBe(tenantSessionName(tenant));
      }),
    );
  });
});
