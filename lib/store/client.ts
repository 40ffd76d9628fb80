import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface ClientOptions {
  region: string;
  /** A local engine (dynalite, DynamoDB Local) or AWS when absent. */
  endpoint?: string | undefined;
  maxAttempts: number;
  /** Per attempt, for connecting and for the answer; past it the attempt fails with a TimeoutError. */
  timeoutMs: number;
  /** Credentials of this client's own (a tenant-fenced session); else local dummies or the SDK's provider. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiration?: Date };
}

/**
 * An endpoint of AWS itself (`https://dynamodb.<region>.amazonaws.com`, a VPC endpoint's name under
 * `amazonaws.com`, the `api.aws` dual-stack names), which needs real credentials. Any other
 * endpoint is an engine that takes any (the embedded engine, DynamoDB Local on this machine or in
 * a container, a test's stand-in).
 */
export function isAwsEndpoint(endpoint: string): boolean {
  const host = new URL(endpoint).hostname.toLowerCase();
  return /(^|\.)amazonaws\.com(\.cn)?$/.test(host) || /(^|\.)api\.aws$/.test(host);
}

/**
 * A DynamoDB document client with bounded attempts and timeouts (the SDK only warns on a request
 * timeout unless told to throw). Engines that are not AWS get static dummy credentials; AWS (with
 * or without an explicit endpoint) gets the SDK's provider, which the Lambda bundles
 * narrow to the environment's credentials (see infra/build.ts). The service's clients are made here
 * (lib/store/tenant-client.ts); this module reads no configuration of its own.
 *
 * The SDK's logger middleware is removed: with no logger configured it still builds a filtered
 * deep copy of every answer (every item of every Query page) for a logger that discards it, which
 * cost as much CPU as reading the page itself. The service logs its own reads.
 */
export function createDocumentClient(options: ClientOptions): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    region: options.region,
    maxAttempts: options.maxAttempts,
    requestHandler: { connectionTimeout: options.timeoutMs, requestTimeout: options.timeoutMs, throwOnRequestTimeout: true },
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.endpoint && !isAwsEndpoint(options.endpoint) ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  base.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}

/** The name under which the SDK registers its logger middleware. */
export const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';
