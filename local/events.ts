import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { LocalRefusal } from './failure.js';

/**
 * Turns local HTTP requests into the very events API Gateway sends to Lambda, so the listeners
 * call the deployed handler modules unchanged.
 */

/**
 * The request target as API Gateway reads it: an absolute path (which may begin with `//`) with
 * its query, or an absolute URL. Anything that is neither (`//[`, `http://[::1/…`, `*`) is a 400,
 * never a crash.
 */
export function targetOf(req: IncomingMessage): URL {
  const target = req.url ?? '/';
  try {
    return target.startsWith('/') ? new URL(`http://local${target}`) : new URL(target);
  } catch {
    throw new LocalRefusal(400, 'The request target is not a valid path.');
  }
}

/** The request's path, as API Gateway reads its target. */
export function pathOf(req: IncomingMessage): string {
  return targetOf(req).pathname;
}

function splitUrl(req: IncomingMessage): { path: string; params: URLSearchParams } {
  const url = targetOf(req);
  return { path: url.pathname, params: url.searchParams };
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

/** Names of the two local APIs as their events give them (`requestContext.apiId`, `stage`). */
const APIS = Object.freeze({
  public: { apiId: 'local', stage: 'local' },
  private: { apiId: 'local-private', stage: 'local' },
});

export interface RestApiEventOptions {
  /** Which API the request came through (default the private one). */
  api?: keyof typeof APIS;
  /** API Gateway's request id (`requestContext.requestId`); new when absent. */
  requestId?: string;
  /** What the token authorizer handed over: `requestContext.authorizer`, as API Gateway passes it. */
  authorizer?: Record<string, string | number | boolean> | null;
  /** The request body, when there is one. */
  body?: Buffer;
}

/**
 * A REST API payload-1.0 proxy event. Repeated headers and query parameters keep every value in
 * the multi-value maps, exactly as API Gateway does; the single-value maps hold the last one. The
 * body arrives as text: the APIs declare no binary media types, so API Gateway passes every payload
 * as text. Without IAM authorization the identity
 * names no principal: the caller is known from its bearer token (on the public API through the
 * authorizer's context; on the private one, from the VPC endpoint it came through and the token).
 */
export function restApiEvent(req: IncomingMessage, resource: string, options: RestApiEventOptions = {}): APIGatewayProxyEvent {
  const { path, params } = splitUrl(req);
  const headers = nameMap<string>();
  const multiValueHeaders = nameMap<string[]>();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const existing = Object.keys(multiValueHeaders).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;
    multiValueHeaders[existing] = [...(multiValueHeaders[existing] ?? []), value];
    headers[existing] = value;
  }
  const multiValueQuery = nameMap<string[]>();
  const query = nameMap<string>();
  for (const [key, value] of params.entries()) {
    multiValueQuery[key] = [...(multiValueQuery[key] ?? []), value];
    query[key] = value;
  }
  const hasQuery = Object.keys(query).length > 0;
  const api = APIS[options.api ?? 'private'];
  const body = options.body && options.body.length > 0 ? options.body : undefined;
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
    body: body ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: api.apiId,
      authorizer: options.authorizer ?? null,
      domainName: headers.Host ?? headers.host ?? 'localhost',
      httpMethod: req.method ?? 'GET',
      path: `/${api.stage}${path}`,
      protocol: `HTTP/${req.httpVersion}`,
      requestId: options.requestId ?? randomUUID(),
      requestTimeEpoch: now.getTime(),
      resourceId: 'local',
      resourcePath: resource,
      stage: api.stage,
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
        ...(options.api === 'public' ? {} : { vpcId: 'vpc-local', vpceId: 'vpce-local' }),
      },
    },
  } as APIGatewayProxyEvent;
}

/** The ARN API Gateway names a method by (`methodArn`), locally. */
export function localMethodArn(method: string, resource: string, api: keyof typeof APIS = 'public'): string {
  return `arn:aws:execute-api:local:000000000000:${APIS[api].apiId}/${APIS[api].stage}/${method}${resource}`;
}

/**
 * The event of a REQUEST authorizer, as API Gateway invokes it for a method, from the proxy event
 * of the same request: its headers and query (every value), the resource and the method's ARN;
 * never the body.
 */
export function requestAuthorizerEvent(event: APIGatewayProxyEvent): APIGatewayRequestAuthorizerEvent {
  const { body: _body, isBase64Encoded: _encoded, requestContext, ...request } = event;
  return {
    type: 'REQUEST',
    methodArn: localMethodArn(event.httpMethod, event.resource),
    ...request,
    requestContext: { ...requestContext, authorizer: undefined },
  } as APIGatewayRequestAuthorizerEvent;
}
