import { GetItemCommand, type GetItemCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fromAttributeValue, toItem } from '../data-format/attribute-values.js';
import { policyKey } from '../data-format/keys.js';
import { type RawItem, TenantPolicy } from '../data-format/records.js';
import { UnreadableStoreAnswerError } from '../errors.js';
import { sendLowLevel } from './query.js';

/** The default policy: ticket optional, scope optional, and the thresholds of DESIGN §4 for every metric. */
export const DEFAULT_POLICY: TenantPolicy = Object.freeze({ ticket: 'optional', scope: 'optional', thresholds: {} }) as TenantPolicy;

/**
 * A tenant's policy from its stored item in wire form, or the default when there is none. A stored
 * policy that does not parse is an error (a broken policy must not silently relax a ticket rule).
 */
export function policyFromItem(item: RawItem | undefined): TenantPolicy {
  if (!item) return DEFAULT_POLICY;
  return TenantPolicy.parse({
    ticket: fromAttributeValue(item.ticket),
    scope: fromAttributeValue(item.scope),
    thresholds: fromAttributeValue(item.thresholds),
  });
}

/**
 * A tenant's policy by its key (one GetItem, eventually consistent as the dashboard's read), or the default when it has
 * none. A stored policy that does not parse throws, as policyFromItem does.
 */
export async function getTenantPolicy(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  signal?: AbortSignal,
): Promise<TenantPolicy> {
  const answer = await sendLowLevel<GetItemCommandOutput>(
    db,
    new GetItemCommand({ TableName: table, Key: toItem({ ...policyKey(tenantId) }) }),
    signal,
  );
  const item = answer?.Item;
  if (item !== undefined && (item === null || typeof item !== 'object'))
    throw new UnreadableStoreAnswerError('a GetItem answer with an item that is not an object');
  return policyFromItem(item);
}
