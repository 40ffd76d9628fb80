import { type DynamoDBDocumentClient, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { auditPartition } from '../lib/data-format/index.js';

/**
 * A tenant's audit items (`tenantId` null: the requests whose token named no tenant), oldest first,
 * each without its keys: what `npm run audit` prints. The functions only put audit items; reading
 * the trail is an operator's business, with the key builder's partition (lib/data-format/keys.ts).
 */
export async function auditItemsOf(db: DynamoDBDocumentClient, table: string, tenantId: string | null): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const pages = paginateQuery(
    { client: db },
    { TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': auditPartition(tenantId) } },
  );
  for await (const page of pages) {
    if (!Array.isArray(page.Items)) throw new Error('the store answered a Query without Items');
    for (const { pk: _pk, sk: _sk, ...item } of page.Items) items.push(item);
  }
  return items;
}
