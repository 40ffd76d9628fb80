import {
  type AttributeValue,
  DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  type QueryCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendLowLevel } from '../../lib/store/query.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

/**
 * The service's clients read a successful Query answer with JSON.parse instead of the SDK's
 * schema walk (lib/store/client.ts). What a caller gets must be what the SDK as anyone gets it
 * gives: the same items, keys and counts, binary values as bytes, errors by the same names.
 */
describe('The store client: Query answers read as DynamoDB wrote them (a real engine)', () => {
  let engine: TestEngine;
  let sdk: DynamoDBClient;
  beforeAll(async () => {
    engine = await startTestEngine();
    sdk = new DynamoDBClient({ region: 'us-east-1', endpoint: engine.endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  });
  afterAll(async () => {
    sdk?.destroy();
    await engine?.close();
  });

  const both = async (input: QueryCommandInput): Promise<[QueryCommandOutput, QueryCommandOutput]> => {
    const ours = await sendLowLevel<QueryCommandOutput>(engine.db, new QueryCommand(input));
    const theirs = await sdk.send(new QueryCommand(input));
    return [ours, theirs];
  };
  const query = (pk: string, extra: Partial<QueryCommandInput> = {}): QueryCommandInput => ({
    TableName: engine.tables.dataTable,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': { S: pk } },
    ...extra,
  });
  const withoutMetadata = ({ $metadata: _, ...rest }: QueryCommandOutput) => rest;
  const put = (item: Record<string, AttributeValue>) => sdk.send(new PutItemCommand({ TableName: engine.tables.dataTable, Item: item }));

  it('gives every kind of attribute value, the next page key and the counts as the SDK does', async () => {
    const pk = 'T#answers#every-kind';
    for (let i = 0; i < 3; i++) {
      await put({
        pk: { S: pk },
        sk: { S: `S#${i}` },
        text: { S: `müller "quoted" \\ ${i}` },
        number: { N: '12345678901234567890.5' },
        yes: { BOOL: true },
        nothing: { NULL: true },
        strings: { SS: ['a', 'b'] },
        numbers: { NS: ['1', '2.5'] },
        list: { L: [{ S: 'x' }, { N: '1' }, { M: { inner: { S: 'y' } } }] },
        map: { M: { nested: { L: [{ BOOL: false }] } } },
      });
    }
    const [ours, theirs] = await both(query(pk, { Limit: 2 }));

    expect(ours.Items).toHaveLength(2);
    expect(ours.LastEvaluatedKey).toEqual({ pk: { S: pk }, sk: { S: 'S#1' } });
    expect(withoutMetadata(ours)).toEqual(withoutMetadata(theirs));
    expect(ours.$metadata.httpStatusCode).toBe(200);
  });

  it('leaves an answer holding a binary value to the SDK, which makes it bytes', async () => {
    const pk = 'T#answers#binary';
    await put({
      pk: { S: pk },
      sk: { S: 'S#0' },
      blob: { B: new Uint8Array([0, 1, 2, 255]) },
      blobs: { BS: [new Uint8Array([7]), new Uint8Array([8, 9])] },
      inside: { M: { blob: { B: new Uint8Array([3]) } } },
    });
    const [ours, theirs] = await both(query(pk));

    expect(ours.Items?.[0]?.blob?.B).toBeInstanceOf(Uint8Array);
    expect([...(ours.Items?.[0]?.blob?.B ?? [])]).toEqual([0, 1, 2, 255]);
    expect(ours.Items?.[0]?.inside?.M?.blob?.B).toBeInstanceOf(Uint8Array);
    expect(withoutMetadata(ours)).toEqual(withoutMetadata(theirs));
  });

  it('fails a Query of a table that does not exist with the SDK’s own error', async () => {
    const input = { ...query('T#answers#none'), TableName: 'no-such-table' };
    const ours = await sendLowLevel(engine.db, new QueryCommand(input)).catch((error: unknown) => error);
    const theirs = await sdk.send(new QueryCommand(input)).catch((error: unknown) => error);

    expect((ours as Error).name).toBe('ResourceNotFoundException');
    expect((ours as Error).name).toBe((theirs as Error).name);
  });

  it('reads an empty page as the SDK does', async () => {
    const [ours, theirs] = await both(query('T#answers#empty'));

    expect(ours.Items).toEqual([]);
    expect(withoutMetadata(ours)).toEqual(withoutMetadata(theirs));
  });

  it('takes the SDK’s reading for an item with an attribute named B, and gives the same answer', async () => {
    const pk = 'T#answers#named-b';
    await put({ pk: { S: pk }, sk: { S: 'S#0' }, B: { S: 'not bytes' } });
    const [ours, theirs] = await both(query(pk));

    expect(ours.Items?.[0]?.B).toEqual({ S: 'not bytes' });
    expect(withoutMetadata(ours)).toEqual(withoutMetadata(theirs));
  });
});
