import { connectionKey, durableAgentKey, policyKey, sampleKey } from './keys.js';
import { type ConnectionRecord, type DurableRecord, RECORD_KIND, type SampleRecord, type TenantPolicy } from './records.js';

/**
 * The items of the data table as a producer writes them (docs/data-format.md): one builder per
 * kind of item, each the one place that decides its shape (keys from lib/data-format/keys.ts, `kind`,
 * the tenant, then the record's fields). What the readers in agents.ts, samples.ts and policy.ts
 * read back. Builders only: writing them (PutItem, BatchWriteItem) is the producer's business.
 */

/** Attribute holding a sample's expiry (epoch seconds) for DynamoDB TTL (infra/tables.yml). */
export const TTL_ATTRIBUTE = 'ttl';

/**
 * The stored item of an agent's durable record (undefined fields are left out when written).
 * `groups` is written as a string set (`SS`), and left out when the agent is in no group.
 */
export function durableRecordItem(tenantId: string, record: DurableRecord): Record<string, unknown> {
  // Object.assign rather than spread: seeding builds hundreds of thousands of these, and V8's
  // object spread is an order of magnitude slower here.
  const item: Record<string, unknown> = Object.assign(
    {} as Record<string, unknown>,
    durableAgentKey(tenantId, record.agent_id),
    { kind: RECORD_KIND.durable, tenant_id: tenantId },
    record,
  );
  item.groups = record.groups && record.groups.length > 0 ? new Set(record.groups) : undefined;
  return item;
}

/** The stored item of an agent's connection record. */
export function connectionRecordItem(tenantId: string, record: ConnectionRecord): Record<string, unknown> {
  return Object.assign(
    {} as Record<string, unknown>,
    connectionKey(tenantId, record.agent_id),
    { kind: RECORD_KIND.connection, tenant_id: tenantId },
    record,
  );
}

/** The stored item of one sample, with its TTL: `observed_at` plus `retentionDays`, in epoch seconds. */
export function sampleItem(tenantId: string, agentId: string, sample: SampleRecord, retentionDays: number): Record<string, unknown> {
  const at = new Date(sample.observed_at);
  const key = sampleKey(tenantId, agentId, at);
  return {
    pk: key.pk,
    sk: key.sk,
    kind: RECORD_KIND.sample,
    tenant_id: tenantId,
    agent_id: agentId,
    observed_at: at.toISOString(),
    cpu: sample.cpu,
    memory: sample.memory,
    disk: sample.disk,
    [TTL_ATTRIBUTE]: Math.floor(at.getTime() / 1000) + retentionDays * 86_400,
  };
}

/** The stored item of a tenant's policy. */
export function policyItem(tenantId: string, policy: TenantPolicy): Record<string, unknown> {
  return { ...policyKey(tenantId), kind: RECORD_KIND.policy, tenant_id: tenantId, ...policy };
}
