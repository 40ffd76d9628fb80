import { request } from 'node:http';
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

/** The inventory floor: a bare Query loop over the tenant's partition, then JSON.stringify of the items. */
export async function inventoryFloor(client: DynamoDBClient, table: string, pk: string): Promise<number> {
  return JSON.stringify(await queryAll(client, { TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: pk } } })).length;
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

/** One GET over HTTP, the body read but not decompressed (what the service and the wire cost, not the client's gunzip). */
export function httpGet(url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
