import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tenantKeyPart, tenantKeyPrefix } from '../../lib/data-format/keys.js';
import {
  SESSION_POLICY_MAX_CHARS,
  tenantAuditSessionPolicy,
  tenantLeadingKeysPattern,
  tenantSessionName,
  tenantSessionPolicy,
  tenantSessionRequest,
} from '../../lib/store/tenant-fence.js';

/**
 * The shapes of what the code asks STS for. Whether those policies admit a tenant's own keys and
 * refuse every other tenant's is judged by an IAM evaluator, together with the role policies of
 * the packaged template: test/infra/tenant-fence-iam.test.ts.
 */

/** Ids as tenants name themselves, the awkward characters favoured, up to long enough for the digest form. */
const id = fc.string({
  unit: fc.oneof(
    fc.constantFrom('*', '?', '#', '%', ' ', '$', '{', '}', '/', '\\', '"', "'", '=', 'a', 'b', 'ü', '漢', '🙂', '${*}'),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 2 }),
  ),
  minLength: 1,
  maxLength: 300,
});

/** A tag value as STS accepts it (the Tag type's documented pattern and length). */
const TAG_VALUE = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u;

describe('Function: tenantSessionPolicy', () => {
  it('writes the prefix the key builder writes, then one wildcard, and nothing else IAM would read as a wildcard or variable (property)', () => {
    fc.assert(
      fc.property(id, (tenant) => {
        const pattern = tenantLeadingKeysPattern(tenant);
        expect(pattern).toBe(`${tenantKeyPrefix(tenant)}*`);
        expect(pattern.slice(0, -1)).not.toMatch(/[*?$]/);
      }),
    );
  });
});

describe('Function: tenantSessionRequest', () => {
  it('tags the session with the tenant exactly as its keys hold it, a value STS accepts, for any tenant (property)', () => {
    fc.assert(
      fc.property(id, fc.constantFrom<'read' | 'audit'>('read', 'audit'), (tenant, fence) => {
        const { Tags } = tenantSessionRequest(tenant, fence);
        expect(Tags).toEqual([{ Key: 'tenant', Value: tenantKeyPart(tenant) }]);
        expect(Tags[0]!.Value).toMatch(TAG_VALUE);
      }),
    );
  });

  it("fits AWS's session-policy limit for every tenant id, whatever its length and characters (property)", () => {
    fc.assert(
      fc.property(id, fc.constantFrom<'read' | 'audit'>('read', 'audit'), (tenant, fence) => {
        expect(tenantSessionRequest(tenant, fence).Policy.length).toBeLessThanOrEqual(SESSION_POLICY_MAX_CHARS);
      }),
    );
  });

  it('sends the policy of its fence', () => {
    expect(JSON.parse(tenantSessionRequest('acme', 'read').Policy)).toEqual(tenantSessionPolicy('acme'));
    expect(JSON.parse(tenantSessionRequest('acme', 'audit').Policy)).toEqual(tenantAuditSessionPolicy('acme'));
  });
});

describe('Function: tenantSessionName', () => {
  it('names the session within STS rules, by fence, the same for the same tenant', () => {
    fc.assert(
      fc.property(id, (tenant) => {
        expect(tenantSessionName(tenant)).toMatch(/^tenant-[0-9a-f]{32}$/);
        expect(tenantSessionName(tenant, 'audit')).toMatch(/^audit-[0-9a-f]{32}$/);
        expect(tenantSessionName(tenant)).toBe(tenantSessionName(tenant));
      }),
    );
  });
});
