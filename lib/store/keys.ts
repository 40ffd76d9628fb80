/**
 * The one place that builds DynamoDB keys. Ids are escaped so that a separator inside an id can
 * never reach another record: `%` and `#` are percent-encoded, so an escaped id contains no `#`
 * and splitting a key on `#` gives back exactly its parts (the escape is injective). Ids are
 * stored as attributes too and are never parsed back out of keys.
 */

const SEP = '#';

/** Percent-encodes `%` and `#` only; every other character (spaces, `/`, non-ASCII) is kept. */
export function escapeId(id: string): string {
  // Almost no id holds either: skip the two replacements (this runs per stored record read).
  if (!id.includes('%') && !id.includes('#')) return id;
  return id.replace(/%/g, '%25').replace(/#/g, '%23');
}

export interface Key {
  pk: string;
  sk: string;
}

/**
 * What every data-table partition key of a tenant begins with, and nothing of another tenant's
 * does: `T#<escaped tenant>#`. An escaped id holds no `#`, so the prefix of one tenant is never a
 * prefix of another's. The IAM tenant fence (lib/store/tenant-fence.ts) allows exactly this prefix.
 */
export function tenantKeyPrefix(tenantId: string): string {
  return `T${SEP}${escapeId(tenantId)}${SEP}`;
}

/** Partition holding every agent record (durable and connection) of one tenant. */
export function agentsPartition(tenantId: string): string {
  return `${tenantKeyPrefix(tenantId)}AGENTS`;
}

/** Sort key of an agent's record within its tenant's partition: `D` durable, `C` connection. */
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

/** Partition of a tenant's audit items; `null` (no tenant claim) has a partition of its own. */
export function auditPartition(tenantId: string | null): string {
  return tenantId === null ? 'NO_TENANT' : ['T', escapeId(tenantId)].join(SEP);
}

/** Key of one audit item: time first so a tenant's items read in order, then the unique audit id. */
export function auditKey(tenantId: string | null, at: Date, auditId: string): Key {
  return { pk: auditPartition(tenantId), sk: [at.toISOString(), escapeId(auditId)].join(SEP) };
}
