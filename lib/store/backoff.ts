import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The wait before sending again what DynamoDB left unprocessed (BatchGetItem's UnprocessedKeys,
 * BatchWriteItem's UnprocessedItems): exponential backoff with full jitter, as AWS advises, a
 * random time up to `baseMs` doubled at each round after the first, capped at `capMs`. `signal`
 * (the caller's deadline) ends the wait at once.
 */
export function waitBeforeRetry(
  round: number,
  options: { baseMs?: number; capMs?: number; signal?: AbortSignal | undefined } = {},
): Promise<void> {
  const { baseMs = 50, capMs = 5_000, signal } = options;
  return sleep(Math.random() * Math.min(capMs, baseMs * 2 ** (round - 1)), undefined, signal ? { signal } : undefined);
}
