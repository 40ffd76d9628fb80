import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentsPartition, connectionKey, durableAgentKey } from '../../lib/data-format/keys.js';
import { anyCharacter } from '../helpers/arbitraries.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

/**
 * The agents' sort keys in a real engine: a tenant's agents partition read in sort-key order lists
 * its agents by agent_id in Unicode code-point order (each agent's connection record, then its
 * durable one), whatever characters the ids hold. Runs against dynalite in `npm test` and against
 * AWS's DynamoDB Local in `npm run test:dynamodb-local`.
 */

let engine: TestEngine;

beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(async () => {
  await engine?.close();
});

/** Code-point order (not JavaScript's default UTF-16 code-unit order). */
const byCodePoint = (a: string, b: string): number => {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};

async function storeAgents(tenant: string, ids: string[]): Promise<void> {
  await Promise.all(
    ids.flatMap((id) => [
      engine.db.send(
        new PutCommand({ TableName: engine.tables.dataTable, Item: { ...durableAgentKey(tenant, id), agent_id: id, record: 'D' } }),
      ),
      engine.db.send(
        new PutCommand({ TableName: engine.tables.dataTable, Item: { ...connectionKey(tenant, id), agent_id: id, record: 'C' } }),
      ),
    ]),
  );
}

/** The partition as the engine returns it: every page, in sort-key order. */
async function readPartition(tenant: string): Promise<Array<{ agent_id: string; record: string }>> {
  const items: Array<{ agent_id: string; record: string }> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await engine.db.send(
      new QueryCommand({
        TableName: engine.tables.dataTable,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': agentsPartition(tenant) },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((page.Items ?? []) as Array<{ agent_id: string; record: string }>));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

describe(`Key order in a real engine`, () => {
  it('lists agents by code point, ids around the escapes and beyond the BMP included', async () => {
    // U+E000..U+FFFF sort before U+10000.. by code point (and UTF-8) but after them by UTF-16 code unit.
    const ids = [
      '\u0000',
      '\u0001',
      ' ',
      '!',
      '"',
      '#',
      '#a',
      '$',
      '$0',
      '%',
      '-',
      '0',
      'A',
      'a',
      'a\u0000',
      'a ',
      'a#',
      'a$',
      'a%',
      'a-1',
      'a-10',
      'a-2',
      'aa',
      'é',
      '東',
      '\ue000',
      '\uffee',
      '𝔘',
      '😀',
    ];
    await storeAgents('order', [...ids].reverse());

    const items = await readPartition('order');

    expect(items.map((i) => i.agent_id)).toEqual(ids.flatMap((id) => [id, id]));
    expect(items.map((i) => i.record)).toEqual(ids.flatMap(() => ['C', 'D']));
    expect([...ids].sort(byCodePoint)).toEqual(ids);
  });

  it('lists random agent ids by code point (property)', async () => {
    const anyId = fc.string({
      unit: fc.oneof(fc.constantFrom(' ', '!', '#', '$', '%', '0', 'A', 'a', '\u007f', 'é', '\ue000', '\uffff'), anyCharacter()),
      minLength: 1,
      maxLength: 8,
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(anyId, { minLength: 2, maxLength: 12 }), async (ids) => {
        run += 1;
        const tenant = `random-${run}`;
        await storeAgents(tenant, ids);

        const listed = (await readPartition(tenant)).filter((i) => i.record === 'D').map((i) => i.agent_id);

        expect(listed).toEqual([...ids].sort(byCodePoint));
      }),
      { numRuns: 15 },
    );
  });
});
