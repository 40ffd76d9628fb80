import { BatchGetItemCommand, type BatchGetItemCommandOutput, type KeysAndAttributes } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Key } from '../data-format/keys.js';
import type { RawItem } from '../data-format/records.js';
import { UnreadableStoreAnswerError } from '../errors.js';
import { waitBeforeRetry } from './backoff.js';
import { sendLowLevel } from './query.js';

/** Thrown when DynamoDB keeps returning keys unprocessed past the retries (throttling): a 503. */
export class UnprocessedKeysError extends Error {
  override name = 'UnprocessedKeysError';
}

/**
 * The items at `keys` (up to 100) of one table, in one BatchGetItem: one request where separate
 * reads would take one each. Keys DynamoDB returns unprocessed are asked again with jittered
 * backoff (lib/store/backoff.ts), at most `maxRetries` times. Items come in no particular order; a key with no item gives
 * none. `signal` (the invocation's deadline) ends the requests and the waits between them.
 *
 * @throws UnreadableStoreAnswerError when the answer has no `Responses` for the table or an item
 *   that is not an object (never read as "no item"); UnprocessedKeysError past the retries.
 */
export async function batchGetItems(
  db: DynamoDBDocumentClient,
  table: string,
  keys: readonly Key[],
  maxRetries = 4,
  signal?: AbortSignal,
): Promise<RawItem[]> {
  const items: RawItem[] = [];
  let pending: KeysAndAttributes | undefined = { Keys: keys.map((k) => ({ pk: { S: k.pk }, sk: { S: k.sk } })), ConsistentRead: false };
  for (let round = 0; pending?.Keys && pending.Keys.length > 0; round++) {
    if (round > maxRetries)
      throw new UnprocessedKeysError(`DynamoDB left ${pending.Keys.length} key(s) unprocessed after ${maxRetries} retries`);
    // The backoff ends with the deadline: an abort rejects the wait at once.
    if (round > 0) await waitBeforeRetry(round, { signal });
    signal?.throwIfAborted();
    const out: BatchGetItemCommandOutput = await sendLowLevel<BatchGetItemCommandOutput>(
      db,
      new BatchGetItemCommand({ RequestItems: { [table]: pending } }),
      signal,
    );
    const got = out?.Responses?.[table];
    if (!Array.isArray(got)) throw new UnreadableStoreAnswerError('a BatchGetItem answer without Responses');
    for (const item of got) {
      if (item === null || typeof item !== 'object' || Array.isArray(item))
        throw new UnreadableStoreAnswerError('a BatchGetItem answer with an item that is not an object');
      items.push(item);
    }
    pending = out.UnprocessedKeys?.[table];
  }
  return items;
}
