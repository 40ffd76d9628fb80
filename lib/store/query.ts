import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

export type Item = Record<string, unknown>;

/**
 * Runs one Query and follows it to its last page (DynamoDB stops a page at 1 MB). Every read of
 * a collection goes through here, so none can stop at its first page.
 */
export async function queryAll(db: DynamoDBDocumentClient, input: QueryCommandInput): Promise<{ items: Item[]; pages: number }> {
  const items: Item[] = [];
  let pages = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    pages += 1;
    items.push(...((page.Items ?? []) as Item[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { items, pages };
}
