import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AwsJson1_0Protocol } from '@aws-sdk/core/protocols';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { collectBody } from '@smithy/core/protocols';

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
 * What a Query answer holds where an item has a binary value (`"B":` or `"BS":`), which the SDK's
 * own reading turns into bytes. Looked for without their opening quote: JSON is full of quotes, so
 * a search that starts with one is some fifty times slower (about 1.7 ms a page against 0.03).
 */
const BINARY_VALUE = [Buffer.from('B":'), Buffer.from('BS":')];

/**
 * DynamoDB's JSON protocol as the SDK speaks it, with one shortcut: a successful Query answer is
 * parsed with `JSON.parse` and handed over as DynamoDB wrote it. The SDK's own reading parses the
 * same text, then walks every attribute value of every item against the operation's schema, and
 * changes nothing in them but binary values (`B`, `BS`: base64 text made into bytes); an answer
 * that holds one (or any member whose name ends so: a quote inside a string is escaped, so the
 * marker cannot come from a value's text) takes the SDK's path. Every other operation and
 * every error answer (the SDK names throttling and server errors from it, and retries them) is
 * the SDK's own, as are the request's signing, HTTP and retries. The walk cost about a tenth of
 * the inventory's CPU (docs/decisions.md, "The inventory's heap").
 */
class QueryAnswersAsWritten extends AwsJson1_0Protocol {
  override async deserializeResponse<Output extends { $metadata: object }>(
    ...[operation, context, response]: Parameters<AwsJson1_0Protocol['deserializeResponse']>
  ): Promise<Output> {
    if (operation.name !== 'Query' || response.statusCode >= 300) return super.deserializeResponse(operation, context, response);
    const bytes = await collectBody(response.body, context);
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (BINARY_VALUE.some((marker) => text.includes(marker))) {
      response.body = bytes;
      return super.deserializeResponse(operation, context, response);
    }
    const output = (text.length > 0 ? JSON.parse(text.toString('utf8')) : {}) as Output;
    output.$metadata = this.deserializeMetadata(response);
    return output;
  }
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
    protocol: QueryAnswersAsWritten,
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
