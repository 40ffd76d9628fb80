import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  agentSortKey,
  agentsPartition,
  auditKey,
  auditPartition,
  connectionKey,
  durableAgentKey,
  escapeId,
  policyKey,
  sampleKey,
  samplesPartition,
  TENANT_PART_MAX_CHARS,
  tenantKeyPart,
  tenantKeyPrefix,
} from '../../lib/data-format/keys.js';
import { anyCharacter } from '../helpers/arbitraries.js';

/** Ids made of the characters that break naive key building. */
const trickyId = fc.string({
  unit: fc.constantFrom(
    '#',
    '%',
    '$',
    '=',
    '/',
    ' ',
    '2',
    '3',
    'a',
    'A',
    'é',
    '東',
    '😀',
    '\u0000',
    'S',
    'T',
    'D',
    'C',
    '*',
    '?',
    '{',
    '}',
    '\\',
    '"',
    "'",
  ),
  minLength: 1,
  maxLength: 128,
});

/** Any well-formed string, with the characters around the escapes (`#`, `$`, `%`, hex digits) favoured. */
const anyId = fc.string({
  unit: fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '\u0000',
        '\u001f',
        ' ',
        '!',
        '"',
        '#',
        '$',
        '%',
        '&',
        '0',
        '2',
        '3',
        '9',
        'A',
        'F',
        'G',
        'a',
        '=',
        '\u007f',
        '\u0080',
        '\uffff',
      ),
    },
    { weight: 2, arbitrary: anyCharacter() },
  ),
  maxLength: 24,
});

/** Tenant ids, some long enough (and made of escaped characters) for the digest form. */
const tenantId = fc.oneof(trickyId, anyId, fc.string({ unit: fc.constantFrom('a', 'é', ' ', '=', '#'), minLength: 40, maxLength: 300 }));

/** A tag value as STS accepts it (the Tag type's documented pattern and length). */
const TAG_VALUE = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u;

/** Sign of a comparison by Unicode code point, as agent_id order is defined. */
function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return Math.sign(x[i]! - y[i]!);
  return Math.sign(x.length - y.length);
}

/** Sign of a comparison as DynamoDB orders string keys: by their UTF-8 bytes. */
const byUtf8 = (a: string, b: string): number => Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

function allKeys(tenant: string, agent: string): string[] {
  const at = new Date('2026-01-01T00:00:00.000Z');
  return [
    `${durableAgentKey(tenant, agent).pk}|${durableAgentKey(tenant, agent).sk}`,
    `${connectionKey(tenant, agent).pk}|${connectionKey(tenant, agent).sk}`,
    `${sampleKey(tenant, agent, at).pk}|${sampleKey(tenant, agent, at).sk}`,
    `${policyKey(tenant).pk}|${policyKey(tenant).sk}`,
  ];
}

describe('Function: tenantKeyPart', () => {
  it.each([
    ['acme', 'acme'],
    ['contoso-ltd_2.eu:prod/x+y@z', 'contoso-ltd_2.eu:prod/x+y@z'],
    ['a b', 'a=0020b'],
    ['müller', 'm=00FCller'],
    ['a*', 'a=002A'],
    ['100%', '100=0025'],
    ['a#b', 'a=0023b'],
    ['=', '=003D'],
    ['😀', '=D83D=DE00'],
  ])('writes tenant %j as %j', (tenant, part) => {
    expect(tenantKeyPart(tenant)).toBe(part);
  });

  it('writes a tenant whose escaped form would pass 256 characters as its digest, 51 characters', () => {
    expect(tenantKeyPart('x'.repeat(TENANT_PART_MAX_CHARS))).toBe('x'.repeat(TENANT_PART_MAX_CHARS));
    expect(tenantKeyPart('x'.repeat(TENANT_PART_MAX_CHARS + 1))).toMatch(/^=sha256:[A-Za-z0-9_-]{43}$/);
    expect(tenantKeyPart('é'.repeat(128))).toMatch(/^=sha256:[A-Za-z0-9_-]{43}$/);
    expect(tenantKeyPart('é'.repeat(128))).not.toBe(tenantKeyPart(`${'é'.repeat(127)}e`));
  });

  it('is something a session tag can carry, with no #, and nothing IAM reads as a wildcard or variable (property)', () => {
    fc.assert(
      fc.property(tenantId, (tenant) => {
        const part = tenantKeyPart(tenant);
        expect(part).toMatch(TAG_VALUE);
        expect(part).not.toMatch(/[#*?$]/);
      }),
      { numRuns: 3_000 },
    );
  });

  it('never gives two different tenants the same part (property)', () => {
    fc.assert(
      fc.property(tenantId, tenantId, (a, b) => {
        fc.pre(a !== b);
        expect(tenantKeyPart(a)).not.toBe(tenantKeyPart(b));
      }),
      { numRuns: 3_000 },
    );
  });

  it('keeps lone surrogates apart from the replacement character they would become in UTF-8', () => {
    expect(tenantKeyPart('\ud800')).not.toBe(tenantKeyPart('\ufffd'));
    expect(tenantKeyPart('\ud800'.repeat(60))).not.toBe(tenantKeyPart('\ufffd'.repeat(60)));
  });
});

describe('Function: tenantKeyPrefix', () => {
  it("is never a prefix of another tenant's prefix or of any key built for another tenant (property)", () => {
    fc.assert(
      fc.property(tenantId, tenantId, trickyId, (tenant, other, agent) => {
        fc.pre(tenant !== other);
        const prefix = tenantKeyPrefix(tenant);
        expect(tenantKeyPrefix(other).startsWith(prefix)).toBe(false);
        for (const pk of [agentsPartition(other), samplesPartition(other, agent), policyKey(other).pk])
          expect(pk.startsWith(prefix)).toBe(false);
        for (const pk of [agentsPartition(tenant), samplesPartition(tenant, agent), policyKey(tenant).pk])
          expect(pk.startsWith(prefix)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps tenants that share a beginning, or look like wildcards, apart', () => {
    expect(agentsPartition('acme2').startsWith(tenantKeyPrefix('acme'))).toBe(false);
    expect(agentsPartition('ab').startsWith(tenantKeyPrefix('a*'))).toBe(false);
    expect(agentsPartition('acme#AGENTS')).not.toBe(agentsPartition('acme'));
  });
});

describe('Function: escapeId', () => {
  it('writes every character up to $ as $ and two hex digits, everything else as itself', () => {
    expect(escapeId('ops/db #1 %23 é')).toBe('ops/db$20$231$20%23$20é');
    expect(escapeId('$24')).toBe('$2424');
    expect(escapeId('\u0000!"')).toBe('$00$21$22');
    expect(escapeId('a-1')).toBe('a-1');
  });

  it('never holds the separator and never maps two ids to one (property)', () => {
    fc.assert(
      fc.property(anyId, anyId, (a, b) => {
        expect(escapeId(a)).not.toContain('#');
        if (a !== b) expect(escapeId(a)).not.toBe(escapeId(b));
      }),
      { numRuns: 5_000 },
    );
  });

  it('keeps lone surrogates apart from each other and from the replacement character', () => {
    const ids = ['\ud800', '\udc00', '\ufffd', 'a\ud83d', '\ude00a'];
    expect(new Set(ids.map(escapeId)).size).toBe(ids.length);
    for (const id of ids) expect(Buffer.from(escapeId(id), 'utf8').toString('utf8')).toBe(escapeId(id));
  });

  it("sorts the agents' sort keys by UTF-8 bytes exactly as the agent ids sort by code point (property)", () => {
    fc.assert(
      fc.property(anyId, anyId, fc.constantFrom<'C' | 'D'>('C', 'D'), fc.constantFrom<'C' | 'D'>('C', 'D'), (a, b, ra, rb) => {
        fc.pre(a !== b);
        expect(byUtf8(agentSortKey(a, ra), agentSortKey(b, rb))).toBe(byCodePoint(a, b));
      }),
      { numRuns: 10_000 },
    );
  });

  it('sorts ids that are prefixes of one another, and the characters around the escapes, in code-point order', () => {
    const ids = [
      '',
      '\u0000',
      '\u0000\u0000',
      ' ',
      '!',
      '"',
      '"0',
      '#',
      '$',
      '$0',
      '%',
      '&',
      '0',
      'a',
      'a\u0000',
      'a ',
      'a#',
      'a$',
      'a%',
      'a-1',
      'aa',
      'é',
      '\uffff',
      '😀',
    ];
    const sorted = [...ids].sort((x, y) => byUtf8(agentSortKey(x, 'D'), agentSortKey(y, 'D')));
    expect(sorted).toEqual(ids);
    // JavaScript's default sort is by UTF-16 code unit, which puts U+FFFF after an emoji: code point order does not.
    expect(byUtf8(agentSortKey('\uffff', 'D'), agentSortKey('😀', 'D'))).toBe(-1);
  });
});

describe('Module: keys', () => {
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
    expect(durableAgentKey('t', 'a#b')).not.toEqual(durableAgentKey('t', 'a$23b'));
    expect(samplesPartition('t', 'x#S#y')).not.toBe(samplesPartition('t#S#x', 'y'));
    expect(agentsPartition('a=0020b')).not.toBe(agentsPartition('a b'));
  });

  it('keeps 128-character ids whole, with no truncation', () => {
    const long = `${'é'.repeat(127)}#`;
    const other = `${'é'.repeat(127)}%`;
    expect(durableAgentKey('t', long).sk).not.toBe(durableAgentKey('t', other).sk);
    expect(durableAgentKey('t', long).sk).toContain('é'.repeat(127));
  });

  it('puts the same agent_id of two tenants in two different partitions', () => {
    expect(durableAgentKey('acme', 'a-1').pk).not.toBe(durableAgentKey('globex', 'a-1').pk);
    expect(samplesPartition('acme', 'a-1')).not.toBe(samplesPartition('globex', 'a-1'));
  });

  it('builds the documented keys (docs/design.md, Key format)', () => {
    expect(durableAgentKey('acme', 'web 1')).toEqual({ pk: 'T#acme#AGENTS', sk: 'A#web$201#D' });
    expect(connectionKey('müller', 'a-1')).toEqual({ pk: 'T#m=00FCller#AGENTS', sk: 'A#a-1#C' });
    expect(sampleKey('acme', 'a-1', new Date('2026-01-01T00:00:00Z'))).toEqual({ pk: 'T#acme#S#a-1', sk: '2026-01-01T00:00:00.000Z' });
    expect(policyKey('acme')).toEqual({ pk: 'T#acme#POLICY', sk: 'POLICY' });
    expect(auditKey('a b', new Date('2026-01-01T00:00:00Z'), 'req-1')).toEqual({ pk: 'T#a=0020b', sk: '2026-01-01T00:00:00.000Z#req-1' });
    expect(auditKey(null, new Date('2026-01-01T00:00:00Z'), 'req-1').pk).toBe('NO_TENANT');
  });

  it('orders audit items of a tenant by time, and keeps the no-tenant partition apart from every tenant', () => {
    const early = auditKey('acme', new Date('2026-01-01T00:00:00.000Z'), 'zzz').sk;
    const late = auditKey('acme', new Date('2026-01-01T00:00:01.000Z'), 'aaa').sk;
    expect(early < late).toBe(true);
    fc.assert(fc.property(tenantId, (tenant) => auditPartition(tenant) !== auditPartition(null)));
    expect(auditPartition('NO_TENANT')).not.toBe(auditPartition(null));
  });
});
