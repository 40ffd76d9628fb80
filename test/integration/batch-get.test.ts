import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { batchGetItems, UnprocessedKeysError } from '../../lib/store/batch-get.js';
import { batchWriteItems } from '../../local/batch-write.js';
import { documentClient, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { answeringEndpoint } from '../helpers/faults.js';

/** A DynamoDB stand-in that leaves every key unprocessed, as DynamoDB does to a throttled batch. */
const throttlingAnswer = (operation: string) =>
  operation === 'BatchGetItem'
    ? { body: JSON.stringify({ Responses: { t: [] }, UnprocessedKeys: { t: { Keys: [{ pk: { S: 'P' }, sk: { S: 'a' } }] } } }) }
    : { statusCode: 400, body: '{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"unexpected"}' };

describe('Function: batchGetItems', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
    await batchWriteItems(engine.db, engine.tables.dataTable, [
      { pk: 'P', sk: 'a', n: 1 },
      { pk: 'P', sk: 'b', n: 2 },
    ]);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await engine?.close();
  });

  it('reads the items at the keys from a real engine in one request, and nothing for a key with no item', async () => {
    const items = await batchGetItems(engine.db, engine.tables.dataTable, [
      { pk: 'P', sk: 'a' },
      { pk: 'P', sk: 'b' },
      { pk: 'P', sk: 'none' },
    ]);

    expect(items.map((i) => (i.sk as { S: string }).S).sort()).toEqual(['a', 'b']);
  });

  it('gives up with UnprocessedKeysError when keys stay unprocessed past the retries (stand-in: a throttled batch)', async () => {
    const standIn = await answeringEndpoint(throttlingAnswer);
    const db = documentClient(standIn.endpoint);

    await expect(batchGetItems(db, 't', [{ pk: 'P', sk: 'a' }], 2)).rejects.toBeInstanceOf(UnprocessedKeysError);
    expect(standIn.requests()).toBe(3);
    db.destroy();
    await standIn.close();
  });

  it('stops at its deadline in the middle of a backoff wait, not after it (stand-in: a throttled batch)', async () => {
    // Jitter at its top, so the waits are 50, 100, 200, 400, 800 ms: the fifth spans the deadline.
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const standIn = await answeringEndpoint(throttlingAnswer);
    const db = documentClient(standIn.endpoint);
    const started = performance.now();

    const read = batchGetItems(db, 't', [{ pk: 'P', sk: 'a' }], 8, AbortSignal.timeout(1_000));

    await expect(read).rejects.toMatchObject({ name: 'AbortError' });
    // Without the abortable wait it would end after the 800 ms wait that started at about 750 ms.
    expect(performance.now() - started).toBeLessThan(1_400);
    expect(standIn.requests()).toBe(5);
    vi.restoreAllMocks();
    db.destroy();
    await standIn.close();
  });
});
