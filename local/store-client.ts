import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StackConfig } from './settings.js';

/**
 * The DynamoDB client of the stack and its CLIs (creating tables, seeding, the audit CLI), on the
 * engine they use. The functions make their own (lib/store/client.ts) from the environment the
 * stack gives them; this one is the stack's, as a producer's client is its own.
 */

/** What the client takes of the stack's configuration: its region, and its attempts and their time (each for connecting and for the answer). */
export type StoreClientSettings = Pick<StackConfig, 'region' | 'dynamoMaxAttempts' | 'dynamoTimeoutMs'>;

/**
 * An endpoint of AWS itself (`https://dynamodb.<region>.amazonaws.com`, a VPC endpoint's name under
 * `amazonaws.com`, the `api.aws` dual-stack names), which needs real credentials. Any other is an
 * engine that takes any (the embedded engine, DynamoDB Local, a test's stand-in). The service's own
 * rule (lib/store/client.ts), copied: test/unit/boundary-copies.test.ts holds the two equal.
 */
export function isAwsEndpoint(endpoint: string): boolean {
  const host = new URL(endpoint).hostname.toLowerCase();
  return /(^|\.)amazonaws\.com(\.cn)?$/.test(host) || /(^|\.)api\.aws$/.test(host);
}

/**
 * A document client with bounded attempts and timeouts (the SDK only warns on a request timeout
 * unless told to throw); dummy credentials for an engine, the SDK's own chain for AWS. Undefined
 * attributes are left out, as the item builders expect (lib/data-format/items.ts).
 */
export function storeClient(endpoint: string, cfg: StoreClientSettings): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    region: cfg.region,
    endpoint,
    maxAttempts: cfg.dynamoMaxAttempts,
    requestHandler: { connectionTimeout: cfg.dynamoTimeoutMs, requestTimeout: cfg.dynamoTimeoutMs, throwOnRequestTimeout: true },
    ...(isAwsEndpoint(endpoint) ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  });
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}
