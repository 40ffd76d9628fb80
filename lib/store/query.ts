import { type DynamoDBClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/client-dynamodb';
import {
  type QueryCommand as DocumentQueryCommand,
  type QueryCommandInput as DocumentQueryInput,
  type DynamoDBDocumentClient,
  paginateQuery,
} from '@aws-sdk/lib-dynamodb';
import type { RawItem } from '../data-format/records.js';
import { UnreadableStoreAnswerError } from '../errors.js';

export type { RawItem };

/** A stored item's key, as an operator finds the item again (never its other attributes). */
export interface StoredKey {
  pk: string;
  sk: string;
}

/** How many keys of unreadable items one read names in its log line: enough to find them, never a flood. */
export const UNREADABLE_KEYS_NAMED = 10;

/**
 * Counts an item that cannot be read into `unreadable`, naming its key while fewer than
 * UNREADABLE_KEYS_NAMED are named (a key that is not a string is named as its type).
 */
export function noteUnreadable(unreadable: { count: number; keys: StoredKey[] }, item: RawItem): void {
  unreadable.count += 1;
  if (unreadable.keys.length >= UNREADABLE_KEYS_NAMED) return;
  const keyPart = (name: 'pk' | 'sk'): string => {
    const value = (item[name] as { S?: unknown } | undefined)?.S;
    return typeof value === 'string' ? value : `(${value === undefined ? 'missing' : typeof value})`;
  };
  unreadable.keys.push({ pk: keyPart('pk'), sk: keyPart('sk') });
}

/** Adds the keys one page named to those of the whole read, as long as fewer than UNREADABLE_KEYS_NAMED are named. */
export function addNamedKeys(named: StoredKey[], more: readonly StoredKey[]): void {
  for (const key of more.slice(0, Math.max(0, UNREADABLE_KEYS_NAMED - named.length))) named.push(key);
}

/**
 * Sends a low-level command through a document client. A document client shares its base
 * client's configuration and middleware stack, so a low-level command runs exactly as it would on
 * the base client; reads that check their own items skip the document client's translation.
 */
export function sendLowLevel<O>(db: DynamoDBDocumentClient, command: { input: unknown }, signal?: AbortSignal): Promise<O> {
  return (db as unknown as DynamoDBClient).send(command as QueryCommand, signal ? { abortSignal: signal } : {}) as unknown as Promise<O>;
}

/**
 * Checks one Query answer: `Items` must be a list of items (objects) and `LastEvaluatedKey`, when
 * present, an item key. Anything else is an answer the store should never give (a broken engine or
 * proxy answering `{}`): a failed read, never an empty page.
 */
function checkedPage<T extends object>(
  page: { Items?: unknown; LastEvaluatedKey?: unknown } | undefined,
): { items: T[]; next: T | undefined } {
  const items = page?.Items;
  if (!Array.isArray(items)) throw new UnreadableStoreAnswerError('a Query answer without Items');
  for (const item of items) {
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      throw new UnreadableStoreAnswerError('a Query answer with an item that is not an object');
  }
  const next = page?.LastEvaluatedKey;
  if (next !== undefined && (next === null || typeof next !== 'object'))
    throw new UnreadableStoreAnswerError('a Query answer with a malformed LastEvaluatedKey');
  return { items: items as T[], next: next as T | undefined };
}

/**
 * The pages of one Query, followed to the last one (DynamoDB stops a page at 1 MB), as the store
 * sends them: items in their wire form, page by page, so a caller can read and drop each page
 * before the next. Every read of a collection goes through here, so none can stop at its first
 * page. `signal` (the invocation's deadline) ends every page request, retries included.
 *
 * The pages come from lib-dynamodb's paginator, with two things it does not do: each page is
 * checked (see checkedPage) before anything is done with it, and page n+1 is requested as soon as
 * page n arrives, before page n is handed over (one request in flight at a time, as a plain loop
 * would, but the caller's work on a page overlaps the wait for the next). The paginator sends
 * each page as a low-level Query (`withCommand` swaps the document command for it), so items stay
 * in wire form: the readers check their own items and skip the document client's translation.
 *
 * @throws UnreadableStoreAnswerError when a page is not a list of items (see checkedPage).
 */
export async function* queryPages(
  db: DynamoDBDocumentClient,
  input: QueryCommandInput,
  signal?: AbortSignal,
): AsyncGenerator<RawItem[], void, undefined> {
  const pages = paginateQuery(
    { client: db, withCommand: (command) => new QueryCommand((command as DocumentQueryCommand).input as QueryCommandInput) },
    // A copy: the paginator writes each page's start key into the input it is given.
    { ...(input as DocumentQueryInput) },
    signal ? { abortSignal: signal } : {},
  );
  let pending: Promise<IteratorResult<unknown>> | undefined = pages.next();
  try {
    for (;;) {
      const result: IteratorResult<unknown> = await pending;
      if (result.done) return;
      // Checked before the next request: a malformed LastEvaluatedKey never becomes a start key.
      const { items } = checkedPage<RawItem>(result.value as { Items?: unknown; LastEvaluatedKey?: unknown });
      pending = pages.next();
      // The caller may hold this page a while (a slow client): a failure of the next one is taken
      // when it is awaited, and must not count as an unhandled rejection meanwhile.
      pending.catch(() => undefined);
      yield items;
    }
  } finally {
    // A caller that stops early (or fails) leaves a prefetched page behind: never let it become an unhandled rejection.
    pending?.catch(() => undefined);
  }
}
