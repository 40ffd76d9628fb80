import { createHash } from 'node:crypto';

/**
 * The one place that builds DynamoDB keys (format: docs/design.md §3, "Key format"). Keys are made
 * of parts joined by `#`; no encoded part ever holds a `#`, so splitting a key on `#` gives back
 * exactly its parts. Two encodings, each injective (two different ids never share an encoding):
 *
 * - the tenant (`tenantKeyPart`): written in the characters an STS session tag can carry, so the
 *   same string is both the tenant part of every key and the `tenant` session tag that the IAM
 *   fence compares keys with (lib/store/tenant-fence.ts, infra/iam.yml);
 * - every other id (`escapeId`: agent ids, audit ids): order-preserving, so the agents' sort keys
 *   sort as DynamoDB sorts them (UTF-8 bytes) exactly as the agent ids sort by code point.
 *
 * Ids are stored as attributes too and are never parsed back out of keys.
 */

const SEP = '#';

/** Characters a tenant part keeps as themselves: ASCII, all in a session tag's `[\p{L}\p{Z}\p{N}_.:/=+\-@]`, `=` left out (it escapes). */
const TENANT_LITERAL = /^[A-Za-z0-9_.:/+@-]*$/;
const TENANT_ESCAPED = /[^A-Za-z0-9_.:/+@-]/g;
/** STS's limit on a session-tag value, in characters. */
export const TENANT_PART_MAX_CHARS = 256;

/**
 * The tenant as it stands in every key and in the `tenant` session tag: each UTF-16 code unit
 * outside `A-Z a-z 0-9 _ . : / + @ -` becomes `=` and four upper-case hex digits (`a b` is
 * `a=0020b`, `müller` is `m=00FCller`); when that would pass 256 characters, `=sha256:` and the
 * base64url SHA-256 of it (51 characters). Invariants: injective (the escape has a fixed width and
 * `=` is always escaped; `=s` never starts an escape, so a digest never equals an escape; two
 * digests meet only through a SHA-256 collision); the result matches a tag value's pattern and
 * length, holds no `#`, and no IAM wildcard or variable character (`*`, `?`, `$`).
 */
export function tenantKeyPart(tenantId: string): string {
  if (TENANT_LITERAL.test(tenantId) && tenantId.length <= TENANT_PART_MAX_CHARS) return tenantId;
  const escaped = tenantId.replace(TENANT_ESCAPED, (c) => `=${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
  if (escaped.length <= TENANT_PART_MAX_CHARS) return escaped;
  return `=sha256:${createHash('sha256').update(escaped).digest('base64url')}`;
}

/** Characters `escapeId` writes as escapes: those up to `$` (the separator `#` among them), and lone surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what the escape must catch.
const ID_ESCAPED = /[\u0000-\u0024\p{Cs}]/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above.
const HAS_ID_ESCAPED = /[\u0000-\u0024\p{Cs}]/u;

/**
 * An id (agent, audit) as it stands in a key: every character from U+0000 to U+0024 (`$`) becomes
 * `$` and two upper-case hex digits (`#` is `$23`, a space `$20`, `$` itself `$24`), every other
 * character stays itself. Invariants: injective; no `#`; and order-preserving: for well-formed
 * ids a and b, the UTF-8 bytes of `escapeId(a) + '#'` and `escapeId(b) + '#'` compare as a and b
 * compare by code point (an escape starts with `$`, which sorts below every kept character and
 * above the `#` that ends an id in a key; hex digits sort as their values). A lone surrogate (no
 * UTF-8 form) becomes `$S` and four hex digits, injective but outside that order.
 */
export function escapeId(id: string): string {
  // Almost no id holds one (this runs per stored record read): skip the replacement.
  if (!HAS_ID_ESCAPED.test(id)) return id;
  return id.replace(ID_ESCAPED, (c) => {
    const unit = c.charCodeAt(0);
    return unit <= 0x24 ? `$${unit.toString(16).toUpperCase().padStart(2, '0')}` : `$S${unit.toString(16).toUpperCase()}`;
  });
}

export interface Key {
  pk: string;
  sk: string;
}

/**
 * What every data-table partition key of a tenant begins with, and nothing of another tenant's
 * does: `T#<tenant part>#`. A tenant part holds no `#`, so the prefix of one tenant is never a
 * prefix of another's. The IAM fence allows exactly this prefix: the role's policy as
 * `T#${aws:PrincipalTag/tenant}#*` (the tag holds `tenantKeyPart`), the session policy literally.
 */
export function tenantKeyPrefix(tenantId: string): string {
  return `T${SEP}${tenantKeyPart(tenantId)}${SEP}`;
}

/** Partition holding every agent record (durable and connection) of one tenant. */
export function agentsPartition(tenantId: string): string {
  return `${tenantKeyPrefix(tenantId)}AGENTS`;
}

/**
 * Sort key of an agent's record within its tenant's partition (`D` durable, `C` connection):
 * `A#<escaped agent id>#<D|C>`. The partition read in sort-key order lists agents by agent_id
 * in code-point order, each agent's `C` record before its `D` record.
 */
export function agentSortKey(agentId: string, record: 'D' | 'C'): string {
  return ['A', escapeId(agentId), record].join(SEP);
}

/** Key of the durable record (enrollment and heartbeat pipeline) of one agent. */
export function durableAgentKey(tenantId: string, agentId: string): Key {
  return { pk: agentsPartition(tenantId), sk: agentSortKey(agentId, 'D') };
}

/** Key of the connection record (connection broker) of one agent. */
export function connectionKey(tenantId: string, agentId: string): Key {
  return { pk: agentsPartition(tenantId), sk: agentSortKey(agentId, 'C') };
}

/** Partition holding the samples of one agent of one tenant, sorted by time. */
export function samplesPartition(tenantId: string, agentId: string): string {
  return `${tenantKeyPrefix(tenantId)}S${SEP}${escapeId(agentId)}`;
}

/** Sort key of a sample: its RFC 3339 UTC time (fixed width, so it sorts by time). */
export function sampleSortKey(observedAt: Date): string {
  return observedAt.toISOString();
}

export function sampleKey(tenantId: string, agentId: string, observedAt: Date): Key {
  return { pk: samplesPartition(tenantId, agentId), sk: sampleSortKey(observedAt) };
}

/** Key of a tenant's optional policy. */
export function policyKey(tenantId: string): Key {
  return { pk: `${tenantKeyPrefix(tenantId)}POLICY`, sk: 'POLICY' };
}

/** The audit partition of the requests whose token named no tenant. */
export const NO_TENANT_AUDIT_PARTITION = 'NO_TENANT';

/**
 * Partition of a tenant's audit items, `T#<tenant part>` (the audit fence allows exactly it);
 * `null` (no tenant claim) has a partition of its own, which no tenant's can equal.
 */
export function auditPartition(tenantId: string | null): string {
  return tenantId === null ? NO_TENANT_AUDIT_PARTITION : `T${SEP}${tenantKeyPart(tenantId)}`;
}

/** Key of one audit item: time first so a tenant's items read in order, then the unique audit id. */
export function auditKey(tenantId: string | null, at: Date, auditId: string): Key {
  return { pk: auditPartition(tenantId), sk: [at.toISOString(), escapeId(auditId)].join(SEP) };
}
