import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { batchWriteItems, UnprocessedItemsError } from '../../local/batch-write.js';
import { documentClient, startTestEngine, type TestEngine } from '../helpers/engine.js';

type Put = { PutRequest: { Item: Record<string, { S?: string; N?: string }> } };

/**
 * A fault injector for what no engine does on demand: a DynamoDB stand-in that answers each
 * BatchWriteItem by leaving some of its items unprocessed (as DynamoDB does under throttling), and
 * records what it accepted.
 */
async function throttlingDynamo(leaveUnprocessed: (call: number, puts: Put[]) => Put[]) {
  const accepted: string[] = [];
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    let body = '';
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { RequestItems } = JSON.parse(body) as { RequestItems: Record<string, Put[]> };
      const [table, puts] = Object.entries(RequestItems)[0]!;
      const left = leaveUnprocessed(calls++, puts);
      for (const p of puts) if (!left.includes(p)) accepted.push(p.PutRequest.Item.sk!.S!);
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ UnprocessedItems: left.length > 0 ? { [table]: left } : {} }));
      }, 5);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted,
    calls: () => calls,
    maxInFlight: () => maxInFlight,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const items = (count: number) => Array.from({ length: count }, (_, i) => ({ pk: 'P', sk: `item-${String(i).padStart(4, '0')}`, n: i }));

describe('Function: batchWriteItems', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
  });
  afterAll(async () => {
    await engine.close();
  });

  it('writes every item into a real engine, in batches of 25 with several in flight', async () => {
    const written = await batchWriteItems(engine.db, engine.tables.dataTable, items(260), { concurrency: 4 });

    expect(written).toBe(260);
    const { Count } = await engine.db.send(
      new QueryCommand({
        TableName: engine.tables.dataTable,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'P' },
        Select: 'COUNT',
      }),
    );
    expect(Count).toBe(260);
  });

  it('sends again the items DynamoDB leaves unprocessed until all are written (fault injector: a throttling stand-in)', async () => {
    // Every first answer for a batch leaves its last 10 items unprocessed; retries are accepted.
    const seen = new Set<string>();
    const fake = await throttlingDynamo((_call, puts) => {
      const key = puts.map((p) => p.PutRequest.Item.sk!.S).join();
      if (seen.has(key) || puts.length <= 10) return [];
      seen.add(key);
      return puts.slice(-10);
    });
    try {
      const written = await batchWriteItems(documentClient(fake.endpoint), 'table', items(100), { concurrency: 3, baseDelayMs: 1 });

      expect(written).toBe(100);
      expect([...fake.accepted].sort()).toEqual(items(100).map((i) => i.sk));
      expect(fake.calls()).toBe(8); // 4 batches, each retried once with its 10 unprocessed items
      expect(fake.maxInFlight()).toBeLessThanOrEqual(3);
    } finally {
      await fake.close();
    }
  });

  it('gives up with a clear error when items stay unprocessed past the retries (fault injector: a throttling stand-in)', async () => {
    const fake = await throttlingDynamo((_call, puts) => puts);
    try {
      const write = batchWriteItems(documentClient(fake.endpoint), 'table', items(5), { maxRetries: 3, baseDelayMs: 1 });

      await expect(write).rejects.toBeInstanceOf(UnprocessedItemsError);
      await expect(write).rejects.toThrow('DynamoDB left 5 item(s) unprocessed after 3 retries; try again later.');
      expect(fake.calls()).toBe(4);
    } finally {
      await fake.close();
    }
  });

  it('stops waiting between retries when its signal fires, not after the wait (fault injector: a throttling stand-in)', async () => {
    const fake = await throttlingDynamo((_call, puts) => puts);
    try {
      const started = performance.now();
      // The first retry waits up to 5 s (full jitter over baseDelayMs); the jitter is pinned near its top
      // (an unlucky draw under 200 ms would retry before the signal fires), and the signal fires long before.
      vi.spyOn(Math, 'random').mockReturnValue(0.9);
      const write = batchWriteItems(documentClient(fake.endpoint), 'table', items(5), {
        baseDelayMs: 5_000,
        signal: AbortSignal.timeout(200),
      });

      await expect(write).rejects.toMatchObject({ name: 'AbortError' });
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(fake.calls()).toBe(1);
    } finally {
      vi.restoreAllMocks();
      await fake.close();
    }
  });
});
