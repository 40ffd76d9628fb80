import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { targetOf } from './http.js';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2WithJWTAuthorizer,
  Context,
} from 'aws-lambda';

/**
 * Turns local HTTP requests into the very events API Gateway sends to Lambda, so the listeners
 * call the deployed handler modules unchanged.
 */

/** API Gateway's JWT authorizer hands claims over as strings: numbers as digits, arrays as "[a b]". */
export function stringifyClaims(payload: Record<string, unknown>): Record<string, string> {
  const claims = nameMap<string>();
  for (const [name, value] of Object.entries(payload)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) claims[name] = `[${value.map(String).join(' ')}]`;
    else if (typeof value === 'object') claims[name] = JSON.stringify(value);
    else claims[name] = String(value);
  }
  return claims;
}

function splitUrl(req: IncomingMessage): { path: string; rawQuery: string; params: URLSearchParams } {
  const url = targetOf(req);
  return { path: url.pathname, rawQuery: url.search.replace(/^\?/, ''), params: url.searchParams };
}

/**
 * A map of names a client chose (headers, query parameters): no prototype, so `__proto__`,
 * `constructor` or `toString` are names like any other, as they are in API Gateway's events.
 */
function nameMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function sourceIp(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
}

/** Media types API Gateway passes as text; any other body arrives base64-encoded. */
function isTextual(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === '' || type.startsWith('text/') || type === 'application/json' || type.endsWith('+json') || type === 'application/x-www-form-urlencoded';
}

/**
 * An HTTP API payload-2.0 event (headers lower-cased, repeats comma-joined). `claims` are the JWT
 * authorizer's, for a route behind one; `undefined` for a route without an authorizer.
 */
export function httpApiEvent(
  req: IncomingMessage,
  routeKey: string,
  claims: Record<string, string> | undefined,
  body?: Buffer,
): APIGatewayProxyEventV2WithJWTAuthorizer {
  const { path, rawQuery, params } = splitUrl(req);
  const headers = nameMap<string>();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  const query = nameMap<string>();
  for (const key of new Set(params.keys())) query[key] = params.getAll(key).join(',');
  const now = new Date();
  const textual = isTextual(headers['content-type']);
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: rawQuery,
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(body && body.length > 0 ? { body: textual ? body.toString('utf8') : body.toString('base64') } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      // A route without an authorizer has none in its event; the type insists on one, so cast.
      authorizer: (claims ? { principalId: '', integrationLatency: 0, jwt: { claims, scopes: [] } } : undefined) as never,
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: req.method ?? 'GET',
        path,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: sourceIp(req),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: Boolean(body && body.length > 0 && !textual),
  };
}

/**
 * A REST API payload-1.0 proxy event (the private observations API). Repeated headers and query
 * parameters keep every value in the multi-value maps, exactly as API Gateway does; the single-value
 * maps hold the last one. The method has no IAM authorization, so the identity names no principal:
 * the caller is known only from its bearer token (and, on AWS, the VPC endpoint it came through).
 */
export function restApiEvent(req: IncomingMessage, resource: string): APIGatewayProxyEvent {
  const { path, params } = splitUrl(req);
  const headers = nameMap<string>();
  const multiValueHeaders = nameMap<string[]>();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const existing = Object.keys(multiValueHeaders).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;
    (multiValueHeaders[existing] ??= []).push(value);
    headers[existing] = value;
  }
  const multiValueQuery = nameMap<string[]>();
  const query = nameMap<string>();
  for (const [key, value] of params.entries()) {
    (multiValueQuery[key] ??= []).push(value);
    query[key] = value;
  }
  const hasQuery = Object.keys(query).length > 0;
  const now = new Date();
  return {
    resource,
    path,
    httpMethod: req.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local-private',
      authorizer: null,
      httpMethod: req.method ?? 'GET',
      path: `/local${path}`,
      protocol: `HTTP/${req.httpVersion}`,
      requestId: randomUUID(),
      requestTimeEpoch: now.getTime(),
      resourceId: 'local',
      resourcePath: resource,
      stage: 'local',
      identity: {
        accessKey: null,
        accountId: '000000000000',
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: sourceIp(req),
        user: null,
        userAgent: headers['User-Agent'] ?? headers['user-agent'] ?? null,
        userArn: null,
        vpcId: 'vpc-local',
        vpceId: 'vpce-local',
      },
    },
  };
}

/** A Lambda context like the one AWS passes, with API Gateway's 29-second integration budget. */
export function lambdaContext(functionName: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
