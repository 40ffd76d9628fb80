import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';

let client: DynamoDBDocumentClient | undefined;

/**
 * The one DynamoDB document client, created on first use from the configuration and reused across
 * invocations. Timeouts and retries are bounded so a slow or absent engine becomes a 504/503 well
 * inside the Lambda timeout. Local engines get static dummy credentials.
 */
export function dynamo(): DynamoDBDocumentClient {
  if (client) return client;
  const cfg = config();
  const base = new DynamoDBClient({
    region: cfg.region,
    maxAttempts: cfg.dynamoMaxAttempts,
    requestHandler: { connectionTimeout: cfg.dynamoTimeoutMs, requestTimeout: cfg.dynamoTimeoutMs, throwOnRequestTimeout: true },
    ...(cfg.dynamoEndpoint
      ? { endpoint: cfg.dynamoEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
  client = DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true },
  });
  return client;
}

/** Replaces the client (tests inject faults or instrumented clients); `undefined` resets it. */
export function setDynamo(next: DynamoDBDocumentClient | undefined): void {
  client = next;
}
