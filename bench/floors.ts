import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { type AttributeValue, BatchGetItemCommand, DynamoDBClient, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { toItem } from '../lib/data-format/attribute-values.js';
import type { Key } from '../lib/data-format/keys.js';
import { AUDIT_PUT_CONDITION } from '../lib/store/audit.js';
import { queryBody, rawQuery } from './raw-query.js';

/**
 * The floors: the least a service could do for the same answer, with the same SDK, on the same
 * engine and data. The client is the SDK as anyone gets it (default configuration; only the local
 * endpoint and dummy credentials given).
 */
export function bareClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } });
}

/** Every item of one Query, following LastEvaluatedKey: the read every answer needs. */
async function queryAll(
  client: DynamoDBClient,
  input: ConstructorParameters<typeof QueryCommand>[0],
): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let key: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: key }));
    for (const item of page.Items ?? []) items.push(item);
    key = page.LastEvaluatedKey;
  } while (key);
  return items;
}

/** The observations floor: a bare Query of the sample partition over the window. */
export async function windowFloor(client: DynamoDBClient, table: string, pk: string, from: string, to: string): Promise<number> {
  const items = await queryAll(client, {
    TableName: table,
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': { S: pk }, ':from': { S: from }, ':to': { S: to } },
  });
  return items.length;
}

/**
 * The observations floor with the handler's own requests (docs/decisions.md, Observations: the
 * policy and the agent decide before data leaves, and the audit item is written before data
 * leaves, its outcome decided by those reads): one BatchGetItem of the tenant policy and the
 * agent's two records together with the window's Query, then one conditional PutItem of the audit
 * record. Two sequential round trips, no token check, no dashboard, no middleware. Keys and
 * record come from the service's builders (lib/data-format/keys.ts, lib/store/audit.ts auditRecord).
 */
export async function sameRequestsFloor(
  client: DynamoDBClient,
  tables: { dataTable: string; auditTable: string },
  keys: { policy: Key; durable: Key; connection: Key },
  window: { pk: string; from: string; to: string },
  audit: Record<string, unknown>,
): Promise<number> {
  const [, samples] = await Promise.all([
    client.send(
      new BatchGetItemCommand({
        RequestItems: { [tables.dataTable]: { Keys: [keys.policy, keys.durable, keys.connection].map((key) => toItem({ ...key })) } },
      }),
    ),
    windowFloor(client, tables.dataTable, window.pk, window.from, window.to),
  ]);
  await client.send(new PutItemCommand({ TableName: tables.auditTable, Item: toItem(audit), ConditionExpression: AUDIT_PUT_CONDITION }));
  return samples;
}

/** What the wire floor saw: its time, the first page's, how many pages and bytes; the first pages' texts when asked. */
export interface WireRun {
  ms: number;
  firstPageMs: number;
  pages: number;
  bytes: number;
  /** The first `keepPages` page texts, for the CPU floor. */
  kept: string[];
}

const NEXT_KEY_MARKER = Buffer.from('"LastEvaluatedKey":');
const ITEMS_MARKER = Buffer.from('"Items":');

/**
 * The next page's key, cut from the bytes of a Query answer without parsing it: the object after
 * the top-level `"LastEvaluatedKey":` (dynalite and DynamoDB write it after `Items`, DynamoDB Local
 * before), or undefined when there is none. Only this bench's items are read here, and none has an
 * attribute of that name, so the one before `Items`, or else the last one, is the top-level one.
 * Structural characters are ASCII, so the bytes are scanned as they are.
 */
export function cutNextKey(body: Uint8Array): Record<string, AttributeValue> | undefined {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const items = bytes.indexOf(ITEMS_MARKER);
  const first = bytes.indexOf(NEXT_KEY_MARKER);
  const at = first >= 0 && first < items ? first : bytes.lastIndexOf(NEXT_KEY_MARKER);
  if (at < 0) return undefined;
  const start = at + NEXT_KEY_MARKER.length;
  let depth = 0;
  let inString = false;
  for (let i = start; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) {
      try {
        const key: unknown = JSON.parse(bytes.toString('utf8', start, i + 1));
        return key !== null && typeof key === 'object' && !Array.isArray(key) ? (key as Record<string, AttributeValue>) : undefined;
      } catch {
        return undefined;
      }
    } else if (depth === 0 && c !== 0x20) return undefined; // not an object
  }
  return undefined;
}

/**
 * The wire floor: the tenant's Query pages fetched as raw HTTP and discarded, one after another
 * (each page's key cut from its bytes, see cutNextKey): no SDK, no item parse,
 * no text of the answer. What reading the partition costs on this engine, with nothing else done.
 *
 * With `parse`, the read floor: the same, but each page is also decoded and parsed as JSON after
 * the next page was asked for (as the service's reader does). The least any reader of the items
 * does; on a machine whose cores the engine shares, that work alone slows the engine's pages.
 */
export async function wireFloor(
  endpoint: string,
  table: string,
  pk: string,
  options: { keepPages?: number; parse?: boolean } = {},
): Promise<WireRun> {
  const { keepPages = 0, parse = false } = options;
  const started = performance.now();
  let pending: Promise<Buffer> | undefined = rawQuery(endpoint, queryBody(table, pk));
  let pages = 0;
  let bytes = 0;
  let firstPageMs = 0;
  const kept: string[] = [];
  while (pending !== undefined) {
    const page: Buffer = await pending;
    if (pages === 0) firstPageMs = performance.now() - started;
    pages += 1;
    bytes += page.length;
    const next = cutNextKey(page);
    // The bench's items hold no attribute of that name: a marker without a key is a cut that failed, not a last page.
    if (!next && page.includes(NEXT_KEY_MARKER)) throw new Error('a Query answer whose LastEvaluatedKey could not be cut');
    pending = next ? rawQuery(endpoint, queryBody(table, pk, JSON.stringify(next))) : undefined;
    if (kept.length < keepPages) kept.push(page.toString('utf8'));
    if (parse && !Array.isArray((JSON.parse(page.toString('utf8')) as { Items?: unknown }).Items))
      throw new Error('a Query answer without Items');
  }
  return { ms: performance.now() - started, firstPageMs, pages, bytes, kept };
}

/**
 * The CPU floor: what parsing Query pages, serializing their items and gzipping the text cost,
 * with nothing of the service's own work (no record checks, no merge, no summaries): CPU ms per
 * 1,000 agents over the given page texts.
 */
export function cpuFloor(pages: readonly string[], level: number): { agents: number; cpuMs: number; perThousandAgentsMs: number } {
  const started = process.cpuUsage();
  let agents = 0;
  for (const page of pages) {
    const items = (JSON.parse(page) as { Items: Record<string, { S?: string }>[] }).Items;
    const ids = new Set<string>();
    for (const item of items) ids.add(item.agent_id?.S ?? '');
    agents += ids.size;
    gzipSync(`[${items.map((item) => JSON.stringify(item)).join(',')}]`, { level });
  }
  const used = process.cpuUsage(started);
  const cpuMs = (used.user + used.system) / 1000;
  return { agents, cpuMs, perThousandAgentsMs: (cpuMs * 1000) / Math.max(1, agents) };
}

/** One GET over HTTP, the body read but not decompressed (what the service and the wire cost, not the client's gunzip). */
export function httpGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; bytes: number; firstByteMs: number; ms: number; headers: Record<string, string | string[] | undefined> }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      let bytes = 0;
      let firstByteMs = -1;
      res.on('data', (c: Buffer) => {
        if (firstByteMs < 0) firstByteMs = performance.now() - started;
        bytes += c.length;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, bytes, firstByteMs, ms: performance.now() - started, headers: res.headers }),
      );
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('the transfer was broken')));
    });
    req.on('error', reject);
    req.end();
  });
}
