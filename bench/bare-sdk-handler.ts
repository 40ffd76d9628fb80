import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';

/**
 * The cold-start floor: a Lambda handler that is nothing but the SDK doing one Query (the first
 * page of a tenant's agents) and returning the items as JSON. Bundled by the bench with the very
 * esbuild options of the service's bundles, so the ratio measures what the service adds.
 */
const client = new DynamoDBClient({
  region: process.env.AWS_REGION ?? 'us-east-1',
  ...(process.env.DYNAMODB_ENDPOINT ? { endpoint: process.env.DYNAMODB_ENDPOINT } : {}),
});

export async function handler(event: { pk: string }): Promise<{ statusCode: number; body: string }> {
  const page = await client.send(
    new QueryCommand({
      TableName: process.env.DATA_TABLE,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: event.pk } },
    }),
  );
  return { statusCode: 200, body: JSON.stringify(page.Items ?? []) };
}
