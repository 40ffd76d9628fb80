import { Agent, request } from 'node:http';

/**
 * One DynamoDB Query as raw HTTP, no SDK: what the wire floor and the CPU floor read the tenant
 * with. A module of its own so the CPU floor's bundle (bench/cpu-floor.ts) carries nothing else.
 */

const wireAgent = new Agent({ keepAlive: true, maxSockets: 1 });

/** The body of a Query of one partition, from `startKey` (a page's LastEvaluatedKey, as JSON) when given. */
export function queryBody(table: string, pk: string, startKey?: string): string {
  const base = `{"TableName":${JSON.stringify(table)},"KeyConditionExpression":"pk = :pk","ExpressionAttributeValues":{":pk":{"S":${JSON.stringify(pk)}}}`;
  return startKey === undefined ? `${base}}` : `${base},"ExclusiveStartKey":${startKey}}`;
}

/**
 * One Query as raw HTTP (a signature-shaped header the local engines accept, never checked); the
 * answer's bytes. A Query is read-only, so one sent on a kept-alive socket the engine closed while
 * it was idle (Node's servers close them after 5 s: "socket hang up") is sent again on a new one,
 * as Node's documentation says a client of a keep-alive agent should.
 */
export async function rawQuery(endpoint: string, body: string): Promise<Buffer> {
  try {
    return await rawQueryOnce(endpoint, body);
  } catch (error) {
    if (!(error as { reusedSocket?: boolean }).reusedSocket || (error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
    return rawQueryOnce(endpoint, body);
  }
}

function rawQueryOnce(endpoint: string, body: string): Promise<Buffer> {
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
          Authorization:
            'AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const page = Buffer.concat(chunks);
          if (res.statusCode !== 200) reject(new Error(`Query answered ${res.statusCode}: ${page.toString('utf8', 0, 300)}`));
          else resolve(page);
        });
        res.on('error', reject);
      },
    );
    req.on('error', (error) => reject(Object.assign(error, { reusedSocket: req.reusedSocket })));
    req.end(body);
  });
}
