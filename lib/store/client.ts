import { DynamoDBClient, type QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';

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
 * A DynamoDB document client with bounded attempts and timeouts (the SDK only warns on a request
 * timeout unless told to throw). Local engines get static dummy credentials; elsewhere the SDK's
 * provider applies, which the Lambda bundles narrow to the environment's credentials (see
 * infra/build.ts). Every client of the project, the service's, the CLIs' and the tests', is made
 * here.
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
    ...(options.endpoint ? { endpoint: options.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  base.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
  readQueryPagesAsJson(base);
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}

/** Where the page read by `queryPageReader` waits for `queryPageOutput`, on the command's context. */
const QUERY_PAGE = Symbol('queryPage');

type Middleware = Parameters<DynamoDBClient['middlewareStack']['add']>[0];
interface RawResponse {
  statusCode?: number;
  body?: unknown;
}

/**
 * Query answers read with `JSON.parse`, in their wire form, instead of the SDK's schema-driven
 * deserializer, which walks and copies every attribute of every item (with the garbage collector
 * paying for the copies): measured, it cost more CPU than everything else the inventory does
 * (README, "Performance"). The wire form is what the service's readers read anyway
 * (lib/store/records.ts), and it is the same shape the SDK gives, but for binary (`B`, `BS`)
 * values, which the SDK decodes: an answer holding any (the service writes none) goes the SDK's
 * way, and so does every answer that is not a 200 or not JSON, so errors and their
 * classification are the SDK's own, and every document client command (isDocumentCommand). Two middlewares: one inside the SDK's deserializer reads the
 * body and hands the SDK an empty answer; one outside it puts the page into the output.
 */
function readQueryPagesAsJson(client: DynamoDBClient): void {
  const reader: Middleware = (next, context) => async (args) => {
    const result = await next(args);
    const response = result.response as RawResponse;
    if (context.commandName !== 'QueryCommand' || isDocumentCommand(context) || response.statusCode !== 200 || !isReadable(response.body)) return result;
    const chunks: Buffer[] = [];
    for await (const chunk of response.body) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const text = bytes.toString('utf8');
    let page: unknown;
    try {
      page = text.includes('"B":') || text.includes('"BS":') ? undefined : JSON.parse(text);
    } catch {
      page = undefined;
    }
    if (page === null || typeof page !== 'object') {
      response.body = bytes; // the SDK reads (and reports) it as it would have
      return result;
    }
    (context as Record<symbol, unknown>)[QUERY_PAGE] = page;
    response.body = EMPTY_ANSWER;
    return result;
  };
  const output: Middleware = (next, context) => async (args) => {
    const result = await next(args);
    const page = (context as Record<symbol, unknown>)[QUERY_PAGE] as Partial<QueryCommandOutput> | undefined;
    if (!page) return result;
    const { Items, Count, ScannedCount, LastEvaluatedKey, ConsumedCapacity } = page;
    return { ...result, output: { ...(result.output as QueryCommandOutput), Items, Count, ScannedCount, LastEvaluatedKey, ConsumedCapacity } };
  };
  client.middlewareStack.add(reader, { step: 'deserialize', priority: 'low', name: 'queryPageReader' });
  client.middlewareStack.add(output, { step: 'deserialize', priority: 'high', name: 'queryPageOutput' });
}

const EMPTY_ANSWER = Buffer.from('{}');

/**
 * A document client's command (native values, translated by lib-dynamodb, which marks the
 * command's context with its `DDB_MAPPER` feature): left to the SDK, whose translation sits
 * next to its deserializer. Only low-level reads (the service's own, of the wire form) take the
 * JSON path.
 */
function isDocumentCommand(context: object): boolean {
  return Boolean((context as { __aws_sdk_context?: { features?: Record<string, unknown> } }).__aws_sdk_context?.features?.DDB_MAPPER);
}

function isReadable(body: unknown): body is AsyncIterable<unknown> {
  return body !== null && typeof body === 'object' && Symbol.asyncIterator in body;
}

/** The name under which the SDK registers its logger middleware. */
export const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';

let client: DynamoDBDocumentClient | undefined;

/**
 * The service's client, created on first use from the configuration and reused across
 * invocations. Timeouts and retries are bounded so a slow or absent engine becomes a 504/503 well
 * inside the Lambda timeout.
 */
export function dynamo(): DynamoDBDocumentClient {
  if (client) return client;
  const cfg = config();
  client = createDocumentClient({
    region: cfg.region,
    endpoint: cfg.dynamoEndpoint,
    maxAttempts: cfg.dynamoMaxAttempts,
    timeoutMs: cfg.dynamoTimeoutMs,
  });
  return client;
}

/** Replaces the client (tests inject faults or instrumented clients); `undefined` resets it. */
export function setDynamo(next: DynamoDBDocumentClient | undefined): void {
  client = next;
}
