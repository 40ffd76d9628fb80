import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { LRUCache } from 'lru-cache';
import { localMethodArn, requestAuthorizerEvent, restApiEvent } from './events.js';
import { IntegrationFailure, sendFunctionAnswer } from './lambda/proxy-integration.js';
import { MAX_BUFFERED_RESPONSE_BYTES } from './lambda/runtime-api.js';
import type { InvocationOutcome } from './lambda/sandbox.js';
import { BodyTooLargeError, headerValues, readBoundedBody, sendGatewayResponse, sendLocalFailure } from './listener-io.js';
import type { ApiRoutes } from './listener-router.js';
import { answerMockIntegration } from './mock-integration.js';
import { PAYLOAD_LIMITS, payloadTooLargeAnswer } from './payload-limits.js';
import { type GatewayResponseType, type PublicApiAnswers, renderGatewayResponse, staticAnswerOf } from './public-api-answers.js';
import { ROUTES, type Route, type RouteAuthorizer, type RouteFunction, TENANT_THROTTLE, type UsageThrottle } from './template-routes.js';
import { continueTrace } from './trace-header.js';

/**
 * The local stand-in for API Gateway's REST APIs: serves the routes (local/template-routes.ts) the
 * listener's router (local/listener-router.ts) matched with the deployed functions, each invoked in its sandbox (local/lambda/) with a payload 1.0 event,
 * or with the route's static answer (its MOCK integration, local/public-api-answers.ts, run by
 * local/mock-integration.ts); in front of
 * a guarded route, the token authorizer function invoked as API Gateway invokes it, its answers
 * cached per door and token for the door's TTL, its policy applied to the method; on a method that
 * takes an API key, the authorizer's usage identifier counted against the tenants' usage plan
 * (each key its own token bucket of the plan's rate and burst: THROTTLED past it, INVALID_API_KEY
 * without one; locally every usage identifier is a key of the plan, as if every tenant were set
 * up); X-Ray's trace header continued (or started) and passed to the event and the invocations, as
 * API Gateway with tracing on does; and API
 * Gateway's own answers as the gateway responses the template has (local/public-api-answers.ts): a function that
 * failed (an error, a crash, its timeout, its memory) INTEGRATION_FAILURE (502); one that did not
 * answer within the integration's timeout INTEGRATION_TIMEOUT (504); a throttled invocation 500,
 * as AWS documents for an invocation Lambda refuses (docs/decisions.md).
 */

/** API Gateway's default (and, buffered, its most) integration timeout of a REST API: 29 seconds. */
export const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

/** Authorizer answers kept at most (expired ones leave first): one per distinct token within the TTL. */
const MAX_CACHED_ANSWERS = 10_000;

/** What the gateway invokes: the deployed functions, each in its sandboxes (local/lambda/local-functions.ts). */
export interface GatewayFunctions {
  invoke(name: RouteFunction | 'authorizer', event: unknown, requestId: string, traceId?: string): Promise<InvocationOutcome>;
}

export interface LocalRestApiOptions {
  api: Route['api'];
  routes?: readonly Route[];
  functions: GatewayFunctions;
  /**
   * What API Gateway answers itself at this API, as the stage configures it (local/public-api-answers.ts):
   * its gateway responses and static answers, read at each request (the stack makes them anew when
   * its environment changes: a promise while they are being made). An answer at hand is sent in the
   * same turn, as API Gateway's own: a client that half-closes at once still gets it.
   */
  answers: () => PublicApiAnswers | Promise<PublicApiAnswers>;
  /** The tenants' usage plan throttle, read at each request (default: the template's, infra/usage-plan.yml). */
  tenantThrottle?: () => UsageThrottle;
  /** While true, every route answers 503 (the local stack is creating its tables and seeding). */
  isStarting?: () => boolean;
  /** The clock of the authorizer cache, in epoch milliseconds. */
  now?: () => number;
  /**
   * How long API Gateway waits for a route's answer (a stream: for its end) before it answers 504:
   * 29 seconds unless told otherwise (the stack gives a STREAM route its `timeoutInMillis`).
   */
  integrationTimeoutMs?: (route: Route) => number;
  /**
   * What the stack can add, in one sentence, to a door's refusal of a token (`answered`: an
   * `Unauthorized` error, or a Deny): API Gateway's UNAUTHORIZED response cannot carry the
   * authorizer's reason, so on AWS that 401 says only that a valid token is required; locally the
   * stack can say why, and how to make a token this stack accepts.
   */
  explainRefusal?: (authorization: string, route: Route, answered: 'UNAUTHORIZED' | 'ACCESS_DENIED') => Promise<string | undefined>;
  /** A function started an instance for this request (a cold start), with its init time (Lambda's Init Duration). */
  onColdStart?: (requestId: string, name: RouteFunction | 'authorizer', initDurationMs: number) => void;
}

/**
 * One REST API as a listener's router mounts it: `serve` answers a request matched to one of its
 * routes (`requestId` is API Gateway's `$context.requestId`, and the invocation's); `missing` is
 * API Gateway's answer to a method or path the API does not have.
 */
export type LocalRestApi = ApiRoutes;

/** A buffered answer's JSON (an authorizer's); a streamed one is read whole first. */
async function answerJson(outcome: Extract<InvocationOutcome, { type: 'buffered' | 'stream' }>): Promise<unknown> {
  let payload: Buffer;
  if (outcome.type === 'stream') {
    payload = await readBoundedBody(outcome.body, MAX_BUFFERED_RESPONSE_BYTES);
    if (await outcome.ended) return undefined;
  } else payload = outcome.payload;
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
}

interface AuthorizerAnswer {
  principalId: string;
  policyDocument: { Statement: Array<{ Effect?: unknown; Action?: unknown; Resource?: unknown }> };
  context?: Record<string, unknown> | null;
  usageIdentifierKey?: string;
}

/** What API Gateway accepts from a Lambda authorizer; anything else is AUTHORIZER_CONFIGURATION_ERROR. */
function isAuthorizerAnswer(value: unknown): value is AuthorizerAnswer {
  const v = value as AuthorizerAnswer | null;
  if (typeof v !== 'object' || v === null || typeof v.principalId !== 'string' || !Array.isArray(v.policyDocument?.Statement)) return false;
  if (v.usageIdentifierKey !== undefined && typeof v.usageIdentifierKey !== 'string') return false;
  const context = v.context ?? {};
  return typeof context === 'object' && Object.values(context).every((x) => ['string', 'number', 'boolean'].includes(typeof x));
}

/** IAM's wildcards in an action or resource: `*` any run of characters, `?` any one. */
function wildcardMatches(pattern: string, value: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(value);
}

/** The effect of an authorizer's policy on one method: an explicit Deny wins, then an Allow; else no access. */
function policyEffect(answer: AuthorizerAnswer, methodArn: string): 'Allow' | 'Deny' | undefined {
  let allowed = false;
  for (const statement of answer.policyDocument.Statement) {
    const actions = [statement.Action].flat().filter((a): a is string => typeof a === 'string');
    const resources = [statement.Resource].flat().filter((r): r is string => typeof r === 'string');
    if (!actions.some((a) => wildcardMatches(a, 'execute-api:Invoke')) || !resources.some((r) => wildcardMatches(r, methodArn))) continue;
    if (statement.Effect === 'Deny') return 'Deny';
    if (statement.Effect === 'Allow') allowed = true;
  }
  return allowed ? 'Allow' : undefined;
}

/** The single value of a header as API Gateway reads an identity source: the last one sent. */
function identityValue(req: IncomingMessage, header: string): string | undefined {
  const value = headerValues(req, header.toLowerCase()).at(-1);
  return value?.trim() ? value : undefined;
}

/**
 * Whether an event is past Lambda's synchronous invocation payload (its JSON, the body inside it
 * escaped): Lambda refuses such an invocation before the function runs (infra/gateway-responses.ts
 * PAYLOAD_LIMITS), so no instance ever holds it.
 */
function exceedsInvocationPayload(event: APIGatewayProxyEvent): boolean {
  return Buffer.byteLength(JSON.stringify(event)) >= PAYLOAD_LIMITS.lambdaInvocationBytes;
}

type Verdict =
  | { allowed: true; context: Record<string, string>; usageIdentifierKey: string | undefined }
  | { allowed: false; type: GatewayResponseType; context?: Record<string, string>; because?: string | undefined };

export function localRestApi(options: LocalRestApiOptions): LocalRestApi {
  const routes = (options.routes ?? ROUTES).filter((route) => route.api === options.api);
  const { functions } = options;
  /** Runs `use` with the answers: at once when they are at hand, else once they are made. */
  const withAnswers = <T>(use: (answers: PublicApiAnswers) => T): T | Promise<T> => {
    const answers = options.answers();
    return answers instanceof Promise ? answers.then(use) : use(answers);
  };
  const isStarting = options.isStarting ?? (() => false);
  const now = options.now ?? Date.now;
  // Each answer for its door's TTL, on the emulation's clock.
  const cache = new LRUCache<string, AuthorizerAnswer>({ max: MAX_CACHED_ANSWERS, perf: { now }, ttlResolution: 0 });
  const throttle = tokenBuckets(options.tenantThrottle ?? (() => TENANT_THROTTLE), now);

  /** Invokes a function for the API request `requestId`; `invocationId` is the invocation's own (the authorizer's differs). */
  const invoke = async (
    name: RouteFunction | 'authorizer',
    event: unknown,
    requestId: string,
    traceId: string,
    invocationId = requestId,
  ): Promise<InvocationOutcome> => {
    const outcome = await functions.invoke(name, event, invocationId, traceId);
    if (outcome.initDurationMs !== undefined) options.onColdStart?.(requestId, name, outcome.initDurationMs);
    return outcome;
  };

  /** The authorizer's verdict on a request at a door, as API Gateway reaches it. */
  const authorize = async (
    req: IncomingMessage,
    event: APIGatewayProxyEvent,
    route: Route,
    door: RouteAuthorizer,
    requestId: string,
    traceId: string,
  ): Promise<Verdict> => {
    // The stack's note on a refusal of the token sent (none without one).
    const explain = async (answered: 'UNAUTHORIZED' | 'ACCESS_DENIED'): Promise<string | undefined> => {
      const sent = identityValue(req, 'Authorization');
      return sent === undefined ? undefined : await options.explainRefusal?.(sent, route, answered);
    };
    let cacheKey: string | undefined;
    if (door.identitySource) {
      const identity = identityValue(req, door.identitySource);
      // No identity source value: API Gateway refuses without invoking the authorizer.
      if (identity === undefined) return { allowed: false, type: 'UNAUTHORIZED' };
      if (door.ttlSeconds > 0) cacheKey = `${door.name}\n${identity}`;
    }
    let answer = cacheKey ? cache.get(cacheKey) : undefined;
    if (!answer) {
      const started = now();
      // The authorizer's invocation has a request id of its own, as on AWS.
      const outcome = await invoke('authorizer', requestAuthorizerEvent(event), requestId, traceId, randomUUID());
      if (outcome.type === 'throttled') return { allowed: false, type: 'AUTHORIZER_FAILURE' };
      if (outcome.type === 'failed') {
        // A Lambda authorizer refuses a token by failing with the exact message `Unauthorized`.
        if (outcome.error.errorMessage !== 'Unauthorized') return { allowed: false, type: 'AUTHORIZER_FAILURE' };
        return { allowed: false, type: 'UNAUTHORIZED', because: await explain('UNAUTHORIZED') };
      }
      const result = await answerJson(outcome);
      if (!isAuthorizerAnswer(result)) return { allowed: false, type: 'AUTHORIZER_CONFIGURATION_ERROR' };
      answer = { ...result, context: { ...result.context, integrationLatency: now() - started } };
      if (cacheKey) cache.set(cacheKey, answer, { ttl: door.ttlSeconds * 1000 });
    }
    // API Gateway hands the context on with every value a string.
    const context: Record<string, string> = { principalId: answer.principalId };
    for (const [key, value] of Object.entries(answer.context ?? {})) context[key] = String(value);
    if (policyEffect(answer, localMethodArn(route.method, route.resource)) !== 'Allow')
      return { allowed: false, type: 'ACCESS_DENIED', context, because: await explain('ACCESS_DENIED') };
    return { allowed: true, context, usageIdentifierKey: answer.usageIdentifierKey };
  };

  const replier =
    (req: IncomingMessage, res: ServerResponse, requestId: string) =>
    (type: GatewayResponseType, authorizer?: Record<string, string>, status?: number, localNote?: string): void | Promise<void> =>
      withAnswers((answers) =>
        sendGatewayResponse(
          res,
          renderGatewayResponse(answers, type, {
            requestId,
            origins: headerValues(req, 'origin'),
            ...(authorizer ? { authorizer } : {}),
            ...(status ? { status } : {}),
            ...(localNote ? { localNote } : {}),
          }),
        ),
      );

  return {
    routes,
    // A REST API answers a method or path it does not have as a missing token; here, in the contract's words.
    missing: (req, res, requestId) => replier(req, res, requestId)('MISSING_AUTHENTICATION_TOKEN'),
    async serve(route, req, res, requestId) {
      const reply = replier(req, res, requestId);
      if (isStarting()) {
        // Until the first attempt to create the tables and seed is over: a script that waits for the
        // port must not read a half-seeded fleet as the whole one.
        return sendLocalFailure(res, 503, 'The service is starting (creating its tables and seeding); try again in a moment.', requestId, {
          'Retry-After': '1',
        });
      }
      let body: Buffer;
      try {
        body = await readBoundedBody(req, PAYLOAD_LIMITS.apiGatewayBytes);
      } catch (error) {
        if (error instanceof BodyTooLargeError) return sendGatewayResponse(res, payloadTooLargeAnswer('apiGatewayBytes'));
        throw error;
      }
      if (route.mock) {
        return withAnswers((answers) => {
          const method = staticAnswerOf(answers, route.method, route.resource);
          if (!method) throw new Error(`no static answer for ${route.method} ${route.resource}`);
          sendGatewayResponse(res, answerMockIntegration(method.Integration, req, requestId));
        });
      }
      // One event per request: the authorizer's is made from it, and its context is added once allowed.
      const event = restApiEvent(req, route.resource, { api: options.api, requestId, body });
      // API Gateway's trace header, in the event as AWS puts it there, and with each invocation.
      const traceId = continueTrace(headerValues(req, 'x-amzn-trace-id').at(-1));
      setEventHeader(event, 'X-Amzn-Trace-Id', traceId);
      if (route.authorizer) {
        const verdict = await authorize(req, event, route, route.authorizer, requestId, traceId);
        if (!verdict.allowed) return reply(verdict.type, verdict.context, undefined, verdict.because);
        event.requestContext.authorizer = verdict.context;
        if (route.apiKeyRequired) {
          // The API key comes from the authorizer (ApiKeySourceType AUTHORIZER); its plan's bucket decides.
          if (verdict.usageIdentifierKey === undefined) return reply('INVALID_API_KEY', verdict.context);
          if (!throttle.take(verdict.usageIdentifierKey)) return reply('THROTTLED', verdict.context);
        }
      }
      if (exceedsInvocationPayload(event)) return sendGatewayResponse(res, payloadTooLargeAnswer('lambdaInvocationBytes'));
      // API Gateway waits this long for the function's answer (a stream: for its end), then answers 504.
      const timeoutMs = options.integrationTimeoutMs?.(route) ?? DEFAULT_INTEGRATION_TIMEOUT_MS;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      try {
        const invocation = invoke(route.function, event, requestId, traceId);
        const outcome = await Promise.race([invocation, timedOut]);
        if (outcome === 'timeout') {
          // The function runs on to its own end (or timeout); its answer, when it comes, is dropped.
          void invocation.then((late) => late.type === 'stream' && late.abort());
          return reply('INTEGRATION_TIMEOUT');
        }
        // Lambda refused the invocation (its reserved concurrency is in use): API Gateway answers 500.
        if (outcome.type === 'throttled') return reply('DEFAULT_5XX', undefined, 500);
        if (outcome.type === 'failed') return reply('INTEGRATION_FAILURE');
        const answered = sendFunctionAnswer(res, route.transferMode, outcome);
        if ((await Promise.race([answered, timedOut])) === 'timeout') {
          if (outcome.type === 'stream') outcome.abort();
          if (res.headersSent) res.destroy();
          else await reply('INTEGRATION_TIMEOUT');
          await answered.catch(() => undefined);
        }
      } catch (error) {
        if (!(error instanceof IntegrationFailure)) throw error;
        // The function's answer is no HTTP response API Gateway can send.
        if (res.headersSent) res.destroy();
        else await reply('INTEGRATION_FAILURE');
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Sets a header of a proxy event, both maps, replacing what the client sent under any spelling. */
function setEventHeader(event: APIGatewayProxyEvent, name: string, value: string): void {
  for (const key of Object.keys(event.headers ?? {})) if (key.toLowerCase() === name.toLowerCase()) delete event.headers[key];
  for (const key of Object.keys(event.multiValueHeaders ?? {}))
    if (key.toLowerCase() === name.toLowerCase()) delete event.multiValueHeaders[key];
  event.headers[name] = value;
  event.multiValueHeaders[name] = [value];
}

/** Keys counted at once (the least recently used leaves first; a new one starts full, as a new key does on AWS). */
const MAX_BUCKETS = 10_000;

/**
 * A usage plan's throttle, one token bucket per API key as API Gateway keeps them: each starts
 * full (`burstLimit` requests), refills at `rateLimit` per second, and a request finding it empty
 * is throttled.
 */
function tokenBuckets(throttle: () => UsageThrottle, now: () => number): { take(key: string): boolean } {
  const buckets = new LRUCache<string, { tokens: number; at: number }>({ max: MAX_BUCKETS });
  return {
    take(key) {
      const limit = throttle();
      const at = now();
      const last = buckets.get(key) ?? { tokens: limit.burstLimit, at };
      const tokens = Math.min(limit.burstLimit, last.tokens + ((at - last.at) / 1000) * limit.rateLimit);
      const allowed = tokens >= 1;
      buckets.set(key, { tokens: allowed ? tokens - 1 : tokens, at });
      return allowed;
    },
  };
}
