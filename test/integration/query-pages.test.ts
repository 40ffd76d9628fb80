import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryPages } from '../../lib/store/query.js';
import { batchWriteItems } from '../../local/batch-write.js';
import { documentClient, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { countingProxy } from '../helpers/faults.js';

const PARTITION = 'T#paging';
const ITEMS = 10;
const PAGE = 3; // Limit 3 over 10 items: pages of 3, 3, 3, 1

/** Polls `condition` until it holds or `ms` pass; the answer says which. */
async function eventually(condition: () => boolean, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  while (!condition() && performance.now() < until) await sleep(10);
  return condition();
}

describe('Function: queryPages (a real engine behind a counting proxy)', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
    const items = Array.from({ length: ITEMS }, (_, i) => ({ pk: PARTITION, sk: `S#${String(i).padStart(2, '0')}`, n: i }));
    await batchWriteItems(engine.db, engine.tables.dataTable, items);
  });
  afterAll(async () => {
    await engine?.close();
  });

  const input = () => ({
    TableName: engine.tables.dataTable,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': { S: PARTITION } },
    Limit: PAGE,
  });

  it('asks for the next page as soon as a page arrives, while the caller still holds it, one request in flight at a time', async () => {
    const proxy = await countingProxy(engine.endpoint);
    const db = documentClient(proxy.endpoint);
    const pages = queryPages(db, input());

    const first = await pages.next();
    // The caller has page 1 and has not asked for more: page 2 is already on its way.
    const prefetched = await eventually(() => proxy.received() >= 2, 2_000);
    const rest: number[] = [];
    for await (const page of pages) rest.push(page.length);

    expect(first.value).toHaveLength(PAGE);
    expect(prefetched).toBe(true);
    expect(rest).toEqual([3, 3, 1]);
    expect(proxy.received()).toBe(4);
    expect(proxy.mostInFlight()).toBe(1);
    db.destroy();
    await proxy.close();
  });

  it('returns every item in wire form, in key order, and asks for nothing more when the caller stops early', async () => {
    const proxy = await countingProxy(engine.endpoint);
    const db = documentClient(proxy.endpoint);

    const all: unknown[] = [];
    for await (const page of queryPages(db, input())) all.push(...page);
    const seenBeforeStop = proxy.received();
    for await (const page of queryPages(db, input())) {
      expect(page).toHaveLength(PAGE);
      break;
    }
    await sleep(100);

    expect(all.map((item) => (item as { sk: { S: string } }).sk.S)).toEqual(
      Array.from({ length: ITEMS }, (_, i) => `S#${String(i).padStart(2, '0')}`),
    );
    expect(all[0]).toMatchObject({ pk: { S: PARTITION }, n: { N: '0' } });
    // One page read, one prefetched, then nothing: the stop is not followed by more requests.
    expect(proxy.received() - seenBeforeStop).toBe(2);
    db.destroy();
    await proxy.close();
  });
});
