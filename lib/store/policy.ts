import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fromAttributeValue } from './attribute-values.js';
import { policyKey } from './keys.js';
import { RECORD_KIND, TenantPolicy, type RawItem } from './records.js';

/** The default policy: ticket optional, and the thresholds of DESIGN §4 for every metric. */
export const DEFAULT_POLICY: TenantPolicy = Object.freeze({ ticket: 'optional', thresholds: {} }) as TenantPolicy;

/**
 * A tenant's policy from its stored item in wire form, or the default when there is none. A stored
 * policy that does not parse is an error (a broken policy must not silently relax a ticket rule).
 */
export function policyFromItem(item: RawItem | undefined): TenantPolicy {
  if (!item) return DEFAULT_POLICY;
  return TenantPolicy.parse({ ticket: fromAttributeValue(item.ticket), thresholds: fromAttributeValue(item.thresholds) });
}

export async function putTenantPolicy(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  policy: TenantPolicy,
): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: table,
      Item: { ...policyKey(tenantId), kind: RECORD_KIND.policy, tenant_id: tenantId, ...policy },
    }),
  );
}
