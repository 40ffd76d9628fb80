import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TTL_ATTRIBUTE } from '../../lib/data-format/items.js';
import { ensureTables, templateTables } from '../../local/tables.js';
import { documentClient, startTestEngine, type TestEngine, uniqueTables } from '../helpers/engine.js';
import { answeringEndpoint } from '../helpers/faults.js';

describe('Function: templateTables', () => {
  it("reads the template's two tables: keys pk and sk, on demand, TTL on the data table's attribute the sample items carry", () => {
    const { data, audit } = templateTables();

    for (const table of [data, audit]) {
      expect(table.keySchema).toEqual([
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ]);
      expect(table.billingMode).toBe('PAY_PER_REQUEST');
    }
    expect(data.ttlAttribute).toBe(TTL_ATTRIBUTE);
    expect(audit.ttlAttribute).toBeUndefined();
  });
});

describe('Function: ensureTables', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({ createTables: false });
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('creates the data and audit tables, returns once both are ACTIVE, and creates nothing the second time', async () => {
    const tables = uniqueTables();

    const first = await ensureTables(engine.db, tables);
    const second = await ensureTables(engine.db, tables);

    expect(first.created).toEqual([tables.dataTable, tables.auditTable]);
    expect(second.created).toEqual([]);
    for (const name of [tables.dataTable, tables.auditTable]) {
      const { Table } = await (engine.db as unknown as DynamoDBClient).send(new DescribeTableCommand({ TableName: name }));
      expect(Table?.TableStatus).toBe('ACTIVE');
    }
  });

  it('stops waiting when its signal fires, for a table that never becomes ACTIVE (stand-in: a table forever CREATING)', async () => {
    const standIn = await answeringEndpoint((operation) =>
      operation === 'CreateTable'
        ? { statusCode: 400, body: '{"__type":"com.amazonaws.dynamodb.v20120810#ResourceInUseException","message":"Table already exists"}' }
        : { body: '{"Table":{"TableName":"t","TableStatus":"CREATING"}}' },
    );
    const db = documentClient(standIn.endpoint, { maxAttempts: 1 });
    const started = performance.now();

    const waiting = ensureTables(db, uniqueTables(), AbortSignal.timeout(400));

    await expect(waiting).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(standIn.requests()).toBeGreaterThan(2); // it did poll DescribeTable before giving up
    db.destroy();
    await standIn.close();
  });
});
