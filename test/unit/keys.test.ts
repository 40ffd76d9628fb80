import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  agentsPartition,
  auditKey,
  connectionKey,
  durableAgentKey,
  escapeId,
  policyKey,
  sampleKey,
  samplesPartition,
} from '../../lib/store/keys.js';

/** Ids made of the characters that break naive key building. */
const trickyId = fc.string({
  unit: fc.constantFrom('#', '%', '/', ' ', '2', '3', 'a', 'A', 'é', '東', '😀', '\u0000', 'S', 'T', 'D', 'C'),
  minLength: 1,
  maxLength: 128,
});

function allKeys(tenant: string, agent: string): string[] {
  const at = new Date('2026-01-01T00:00:00.000Z');
  return [
    `${durableAgentKey(tenant, agent).pk}|${durableAgentKey(tenant, agent).sk}`,
    `${connectionKey(tenant, agent).pk}|${connectionKey(tenant, agent).sk}`,
    `${sampleKey(tenant, agent, at).pk}|${sampleKey(tenant, agent, at).sk}`,
    `${policyKey(tenant).pk}|${policyKey(tenant).sk}`,
  ];
}

describe('Module: keys', () => {
  it('escapes only % and # so an escaped id never contains the separator', () => {
    expect(escapeId('ops/db #1 %23 é')).toBe('ops/db %231 %2523 é');
    fc.assert(fc.property(trickyId, (id) => !escapeId(id).includes('#')));
  });

  it('never maps two different ids to the same escaped id (injective)', () => {
    fc.assert(
      fc.property(trickyId, trickyId, (a, b) => {
        fc.pre(a !== b);
        return escapeId(a) !== escapeId(b);
      }),
      { numRuns: 2000 },
    );
  });

  it('never lets two different (tenant, agent) pairs share a record key', () => {
    fc.assert(
      fc.property(trickyId, trickyId, trickyId, trickyId, (t1, a1, t2, a2) => {
        fc.pre(t1 !== t2 || a1 !== a2);
        const first = allKeys(t1, a1);
        const second = new Set(allKeys(t2, a2));
        // A policy key depends on the tenant only, so it is shared by design within one tenant.
        const comparable = t1 === t2 ? first.slice(0, 3) : first;
        return comparable.every((k) => !second.has(k));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the ids that look like an escape apart from the ids they would decode to', () => {
    expect(durableAgentKey('t', 'a#b')).not.toEqual(durableAgentKey('t', 'a%23b'));
    expect(samplesPartition('t', 'x#S#y')).not.toBe(samplesPartition('t#S#x', 'y'));
    expect(agentsPartition('acme')).not.toBe(agentsPartition('acme#AGENTS'));
  });

  it('keeps 128-character ids whole, with no truncation', () => {
    const long = 'é'.repeat(127) + '#';
    const other = 'é'.repeat(127) + '%';
    expect(durableAgentKey('t', long).sk).not.toBe(durableAgentKey('t', other).sk);
    expect(durableAgentKey('t', long).sk).toContain('é'.repeat(127));
  });

  it('puts the same agent_id of two tenants in two different partitions', () => {
    expect(durableAgentKey('acme', 'a-1').pk).not.toBe(durableAgentKey('globex', 'a-1').pk);
    expect(samplesPartition('acme', 'a-1')).not.toBe(samplesPartition('globex', 'a-1'));
  });

  it('orders audit items of a tenant by time', () => {
    const early = auditKey('acme', new Date('2026-01-01T00:00:00.000Z'), 'zzz').sk;
    const late = auditKey('acme', new Date('2026-01-01T00:00:01.000Z'), 'aaa').sk;
    expect(early < late).toBe(true);
    expect(auditKey(null, new Date(), 'x').pk).not.toBe(auditKey('NO_TENANT', new Date(), 'x').pk);
  });
});
