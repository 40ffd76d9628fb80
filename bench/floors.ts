import { Agent, request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { DynamoDBClient, QueryCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The floors: the least a service could do for the same answer, with the same SDK, on the same
 * engine and data. The client is the SDK as anyone gets it (default configuration; only the local
 * endpoint and dummy credentials given).
 */
export function bareClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } });
}

/** Every item of one Query, following LastEvaluatedKey: the read every answer needs. */
async function queryAll(client: DynamoDBClient, input: ConstructorParameters<typeof QueryCommand>[0]): Promise<Record<string, AttributeValue>[]> {
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

/** What the wire floor saw: its time, the first page's, how many pages and bytes; the first pages' texts when asked. */
export interface WireRun {
  ms: number;
  firstPageMs: number;
  pages: number;
  bytes: number;
  /** The first `keepPages` page texts, for the CPU floor. */
  kept: string[];
}

/**
 * The key of the next page, cut from a Query answer's text without parsing it: the object after
 * the top-level `"LastEvaluatedKey":`, which DynamoDB Local writes before `Items` and dynalite
 * (like DynamoDB) after it. Only this service's items are read here, and none has an attribute of
 * that name, so the last occurrence after `Items`, or the one before it, is the top-level one.
 */
export function cutLastEvaluatedKey(page: string): string | undefined {
  const marker = '"LastEvaluatedKey":';
  const items = page.indexOf('"Items":');
  const before = page.indexOf(marker);
  const at = before >= 0 && before < items ? before : page.lastIndexOf(marker);
  if (at < 0 || (at > items && before < 0)) return undefined;
  const start = at + marker.length;
  let depth = 0;
  let inString = false;
  for (let i = start; i < page.length; i++) {
    const c = page.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return page.slice(start, i + 1);
  }
  throw new Error('a Query answer whose LastEvaluatedKey does not end');
}

const wireAgent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One Query as raw HTTP (no SDK: a signature-shaped header the local engines accept, never checked). */
function rawQuery(endpoint: string, body: string): Promise<string> {
  const amzDate = '20260101T000000Z';
  return new Promise((resolve, reject) => {
    const req = request(
      endpoint,
      {
        method: 'POST',
        agent: wireAgent,
        headers: {
          'Content-Type': 'application/x-amz-json-1.0',
          'X-Amz-Target': 'DynamoDB_20120810.Query',
          'X-Amz-Date': amzDate,
          Authorization: 'AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`Query answered ${res.statusCode}: ${text.slice(0, 300)}`));
          else resolve(text);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The wire floor: the tenant's Query pages fetched as raw HTTP and discarded, one after another
 * (each page's key cut from its text): no SDK, no item parse, no JSON of the answer. What reading
 * the partition costs on this engine, with nothing else done.
 */
export async function wireFloor(endpoint: string, table: string, pk: string, keepPages = 0): Promise<WireRun> {
  const started = performance.now();
  const base = `{"TableName":${JSON.stringify(table)},"KeyConditionExpression":"pk = :pk","ExpressionAttributeValues":{":pk":{"S":${JSON.stringify(pk)}}}`;
  let next: string | undefined;
  let pages = 0;
  let bytes = 0;
  let firstPageMs = 0;
  const kept: string[] = [];
  do {
    const page = await rawQuery(endpoint, next ? `${base},"ExclusiveStartKey":${next}}` : `${base}}`);
    if (pages === 0) firstPageMs = performance.now() - started;
    pages += 1;
    bytes += page.length;
    if (kept.length < keepPages) kept.push(page);
    next = cutLastEvaluatedKey(page);
  } while (next);
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
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, firstByteMs, ms: performance.now() - started, headers: res.headers }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('the transfer was broken')));
    });
    req.on('error', reject);
    req.end();
  });
}
