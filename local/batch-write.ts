import { setTimeout as sleep } from 'node:timers/promises';
import { BatchWriteItemCommand, type DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { toItem } from '../lib/data-format/index.js';

/** DynamoDB's most put requests per BatchWriteItem. */
const BATCH_WRITE_MAX_ITEMS = 25;

export interface BatchWriteOptions {
  /** BatchWriteItem requests in flight at once (default 8). */
  concurrency?: number;
  /** Rounds of retrying a batch's unprocessed items before giving up (default 10). */
  maxRetries?: number;
  /** Backoff of the first retry in ms, doubled each round with full jitter, capped at 5 s (default 50). */
  baseDelayMs?: number;
  /** Called after each batch is fully written, with the number of items it held. */
  onWritten?: (count: number) => void;
  /** Ends the write: the requests in flight and the waits between retries (an AbortError). */
  signal?: AbortSignal;
}

/** Thrown when DynamoDB keeps returning a batch's items unprocessed past the retries. */
export class UnprocessedItemsError extends Error {
  override name = 'UnprocessedItemsError';
}

/** The wait before a retry: exponential backoff with full jitter, as AWS advises, capped at 5 s; `signal` ends it. */
function backoff(round: number, baseMs: number, signal: AbortSignal | undefined): Promise<void> {
  return sleep(Math.random() * Math.min(5_000, baseMs * 2 ** (round - 1)), undefined, signal ? { signal } : undefined);
}

/**
 * Writes (puts) `items` into `table` in BatchWriteItems of 25, `concurrency` in flight (p-limit):
 * how the stack seeds a fleet, and how `npm run seed` loads one into any table. Items go in
 * DynamoDB's wire form (lib/data-format/attribute-values.ts, cheaper than the document client's
 * marshaller for hundreds of thousands of flat items) through the base client the document client
 * wraps. Items DynamoDB returns unprocessed (throttling, a busy partition) are sent again, with
 * exponential backoff and full jitter, until none are left; a batch still
 * unprocessed after `maxRetries` rounds fails the whole write. Items are taken from the iterable
 * only when a request can be sent, so a generator of items is never held in memory at once. Puts
 * of the same key overwrite, so writing twice is idempotent.
 *
 * @returns the number of items written.
 */
export async function batchWriteItems(
  db: DynamoDBDocumentClient,
  table: string,
  items: Iterable<Record<string, unknown>>,
  options: BatchWriteOptions = {},
): Promise<number> {
  const concurrency = options.concurrency ?? 8;
  const maxRetries = options.maxRetries ?? 10;
  const baseDelayMs = options.baseDelayMs ?? 50;
  const { signal } = options;
  const source = items[Symbol.iterator]();
  let written = 0;

  const nextBatch = (): Record<string, unknown>[] => {
    const batch: Record<string, unknown>[] = [];
    while (batch.length < BATCH_WRITE_MAX_ITEMS) {
      const next = source.next();
      if (next.done) break;
      batch.push(next.value);
    }
    return batch;
  };

  const writeBatch = async (batch: Record<string, unknown>[]): Promise<void> => {
    let pending: WriteRequest[] = batch.map((item) => ({ PutRequest: { Item: toItem(item) } }));
    for (let round = 0; pending.length > 0; round++) {
      if (round > maxRetries) {
        throw new UnprocessedItemsError(
          `DynamoDB left ${pending.length} item(s) unprocessed after ${maxRetries} retries; try again later.`,
        );
      }
      if (round > 0) await backoff(round, baseDelayMs, signal);
      signal?.throwIfAborted();
      const out = await (db as unknown as DynamoDBClient).send(
        new BatchWriteItemCommand({ RequestItems: { [table]: pending } }),
        signal ? { abortSignal: signal } : {},
      );
      pending = out.UnprocessedItems?.[table] ?? [];
    }
    written += batch.length;
    options.onWritten?.(batch.length);
  };

  const limit = pLimit(Math.max(1, concurrency));
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for (let batch = nextBatch(); batch.length > 0 && !failure; batch = nextBatch()) {
    const write = limit(writeBatch, batch).then(
      () => undefined,
      (error: unknown) => {
        failure ??= { error };
      },
    );
    inFlight.add(write);
    void write.finally(() => inFlight.delete(write));
    // The next batch is read only once a request slot is free.
    if (limit.activeCount + limit.pendingCount >= limit.concurrency) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
  return written;
}
