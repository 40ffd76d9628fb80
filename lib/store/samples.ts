import { BatchWriteCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { queryAll } from './query.js';
import { sampleKey, sampleSortKey, samplesPartition } from './keys.js';
import { RECORD_KIND, SampleRecord } from './records.js';
import { TTL_ATTRIBUTE } from './tables.js';

function parseSamples(items: Record<string, unknown>[]): SampleRecord[] {
  const samples: SampleRecord[] = [];
  for (const item of items) {
    const parsed = SampleRecord.safeParse(item);
    if (parsed.success) samples.push(parsed.data);
  }
  return samples;
}

/** Samples of one agent with from <= observed_at <= to, oldest first: one paginated Query. */
export async function querySamples(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  agentId: string,
  from: Date,
  to: Date,
): Promise<SampleRecord[]> {
  const { items } = await queryAll(db, {
    TableName: table,
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: {
      ':pk': samplesPartition(tenantId, agentId),
      ':from': sampleSortKey(from),
      ':to': sampleSortKey(to),
    },
  });
  return parseSamples(items);
}

/** The newest sample at or after `notBefore` (the retention edge), or undefined: a one-item Query. */
export async function newestSample(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  agentId: string,
  notBefore: Date,
): Promise<SampleRecord | undefined> {
  const page = await db.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      ExpressionAttributeValues: { ':pk': samplesPartition(tenantId, agentId), ':from': sampleSortKey(notBefore) },
      ScanIndexForward: false,
      Limit: 1,
    }),
  );
  return parseSamples((page.Items ?? []) as Record<string, unknown>[])[0];
}

/** Writes samples in batches of 25, retrying unprocessed items; each carries its TTL. Idempotent by time. */
export async function putSamples(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  agentId: string,
  samples: SampleRecord[],
  retentionDays: number,
): Promise<void> {
  const requests = samples.map((s) => {
    const at = new Date(s.observed_at);
    return {
      PutRequest: {
        Item: {
          ...sampleKey(tenantId, agentId, at),
          kind: RECORD_KIND.sample,
          tenant_id: tenantId,
          agent_id: agentId,
          observed_at: at.toISOString(),
          cpu: s.cpu,
          memory: s.memory,
          disk: s.disk,
          [TTL_ATTRIBUTE]: Math.floor(at.getTime() / 1000) + retentionDays * 86_400,
        },
      },
    };
  });
  for (let i = 0; i < requests.length; i += 25) {
    let pending: Record<string, (typeof requests)[number][]> | undefined = { [table]: requests.slice(i, i + 25) };
    for (let attempt = 0; pending && Object.keys(pending).length > 0; attempt++) {
      if (attempt > 8) throw new Error('sample batch write kept returning unprocessed items');
      if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      const out = await db.send(new BatchWriteCommand({ RequestItems: pending }));
      pending = out.UnprocessedItems as typeof pending;
    }
  }
}
