import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { sampleSortKey, samplesPartition } from '../data-format/keys.js';
import { readSampleRecord, type SampleRecord } from '../data-format/records.js';
import { UnreadableStoreAnswerError } from '../errors.js';
import { noteUnreadable, queryPages, type StoredKey, sendLowLevel } from './query.js';

/** Samples read from the store, and how many stored samples could not be read (never silently dropped). */
export interface SamplesRead {
  samples: SampleRecord[];
  unreadable: number;
  /** The keys of the first of them (noteUnreadable), for the log line that names them. */
  unreadableKeys: StoredKey[];
}

/**
 * Samples of one agent with from <= observed_at <= to, oldest first: one paginated Query, each page
 * read and dropped before the next. A sample that cannot be read is counted, not returned.
 */
export async function querySamples(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  agentId: string,
  from: Date,
  to: Date,
  signal?: AbortSignal,
): Promise<SamplesRead> {
  const samples: SampleRecord[] = [];
  const unreadable = { count: 0, keys: [] as StoredKey[] };
  const pages = queryPages(
    db,
    {
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': { S: samplesPartition(tenantId, agentId) },
        ':from': { S: sampleSortKey(from) },
        ':to': { S: sampleSortKey(to) },
      },
    },
    signal,
  );
  for await (const items of pages) {
    for (const item of items) {
      const sample = readSampleRecord(item);
      if (sample) samples.push(sample);
      else noteUnreadable(unreadable, item);
    }
  }
  return { samples, unreadable: unreadable.count, unreadableKeys: unreadable.keys };
}

/**
 * The newest sample with notBefore <= observed_at <= notAfter (the retention edge and `now`, as
 * the window is bounded), or undefined: a one-item Query from the newest end. A sample stamped
 * after `notAfter` (a clock running ahead) is never the newest. When the newest stored sample
 * cannot be read, the answer says so (`unreadable: 1`) rather than looking like no sample at all.
 */
export async function newestSample(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  agentId: string,
  notBefore: Date,
  notAfter: Date,
  signal?: AbortSignal,
): Promise<{ sample: SampleRecord | undefined; unreadable: number; unreadableKeys: StoredKey[] }> {
  const page = await sendLowLevel<QueryCommandOutput>(
    db,
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': { S: samplesPartition(tenantId, agentId) },
        ':from': { S: sampleSortKey(notBefore) },
        ':to': { S: sampleSortKey(notAfter) },
      },
      ScanIndexForward: false,
      Limit: 1,
    }),
    signal,
  );
  const items = page?.Items;
  if (!Array.isArray(items)) throw new UnreadableStoreAnswerError('a Query answer without Items');
  const item = items[0];
  if (item === undefined) return { sample: undefined, unreadable: 0, unreadableKeys: [] };
  if (item === null || typeof item !== 'object') throw new UnreadableStoreAnswerError('a Query answer with an item that is not an object');
  const sample = readSampleRecord(item);
  if (sample) return { sample, unreadable: 0, unreadableKeys: [] };
  const unreadable = { count: 0, keys: [] as StoredKey[] };
  noteUnreadable(unreadable, item);
  return { sample: undefined, unreadable: unreadable.count, unreadableKeys: unreadable.keys };
}
