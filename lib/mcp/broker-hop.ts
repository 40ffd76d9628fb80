import { decodeJwt } from 'jose';
import { BROKER_REFUSALS } from '../auth/broker.js';
import { type EndpointScope, readScopeClaim, sameScope } from '../auth/endpoint-scope.js';
import { type ExchangedToken, ExchangedTokenCache, exchangeToken, TokenExchangeError } from '../auth/token-exchange.js';
import type { Settings } from '../config.js';
import {
  ATTRIBUTION_HEADERS,
  type AttributionSources,
  attributionSourceValue,
  encodedReasonHeaders,
  TICKET_REQUIRED,
} from '../contract/attribution.js';
import { EndpointDashboard } from '../contract/schemas.js';
import { logger } from '../observability/logger.js';
import { traceHeaderWithoutTracer } from '../observability/tracer.js';
import { parseFailureBody } from '../responses.js';
import { type BrokerSecret, BrokerSecretError } from './broker-secret.js';
import { misconfiguration, retryAfterSeconds, TOOL_SENTENCES, ToolFailure } from './tool-failure.js';

/**
 * The broker's hop to the private observations operation, in one module: exchange the user's token
 * for one with the observations audience (RFC 8693, lib/auth/token-exchange.ts; one exchange
 * shared by concurrent calls, cached until shortly before it or the user's token expires), check
 * that the exchanged token carries the user's endpoint scope unchanged, then
 * `GET /api/mcp/endpoint` with `Authorization: Bearer` and the attribution as `X-Service-*` headers
 * (the reason percent-encoded, so any script arrives unchanged) and where each value came from
 * (`X-Service-Attribution-Source`). Every answer other than a readable dashboard becomes a
 * ToolFailure with one sentence.
 */

const SERVICE = 'observations service';
const SIGN_IN = 'sign-in service';

/** What the broker asks the private operation for: the tool's arguments, the attribution as it stands, and where it came from. */
export interface BrokeredArgs {
  agent_id: string;
  minutes?: number | undefined;
  limit?: number | undefined;
  /** Absent only when the person declined (or dismissed) the question for it: the operation then records the refusal. */
  reason?: string | undefined;
  ticket?: { number: string; system: string } | undefined;
  sources: AttributionSources;
}

export interface BrokeredRead {
  /** The user's bearer token for the MCP resource, as the door received it. */
  subjectToken: string;
  /** When it expires (epoch ms), so no exchanged token is kept past it. */
  subjectExpiresAt?: number | undefined;
  /** The endpoint scope of the user's token, which the exchanged token must carry unchanged. */
  scope: EndpointScope;
  args: BrokeredArgs;
  /** The caller's deadline for the whole tool call. */
  signal: AbortSignal;
}

export interface DashboardRead {
  /** The dashboard exactly as the operation returned it (validated, not rebuilt). */
  dashboard: EndpointDashboard;
  /** The audit item the read left (X-Audit-Id). */
  auditId: string | undefined;
}

/**
 * The broker secret that could not be had, as the tool's sentence: a misconfiguration, or the sign-in
 * service unavailable. Anything else is thrown on as it is.
 */
export function secretFailure(error: unknown): ToolFailure {
  if (!(error instanceof BrokerSecretError)) throw error;
  if (error.kind === 'misconfigured') return misconfiguration(TOOL_SENTENCES.misconfigured, { cause: error.message });
  logger.error('broker secret unavailable', { cause: error.message });
  return new ToolFailure(TOOL_SENTENCES.unavailable(SIGN_IN, 5));
}

function exchangeFailure(error: unknown, secret: Pick<BrokerSecret, 'forget'>): ToolFailure {
  if (error instanceof BrokerSecretError) return secretFailure(error);
  if (error instanceof TokenExchangeError) {
    switch (error.kind) {
      case 'timeout':
        return new ToolFailure(TOOL_SENTENCES.timedOut(SIGN_IN, 5));
      case 'unavailable':
        logger.warn('token exchange unavailable', { cause: error.message });
        return new ToolFailure(TOOL_SENTENCES.unavailable(SIGN_IN, 5));
      case 'subject-refused':
        logger.info('token exchange refused the subject token', { cause: error.message });
        return new ToolFailure(TOOL_SENTENCES.signInAgain);
      case 'misconfigured':
        secret.forget();
        return misconfiguration(TOOL_SENTENCES.misconfigured, { cause: error.message });
    }
  }
  throw error;
}

function requestUrl(observationsUrl: string, args: BrokeredArgs): string {
  const url = new URL(observationsUrl);
  url.searchParams.set('agent_id', args.agent_id);
  if (args.minutes !== undefined) url.searchParams.set('minutes', String(args.minutes));
  if (args.limit !== undefined) url.searchParams.set('limit', String(args.limit));
  return url.toString();
}

function attributionHeaders(args: BrokeredArgs): Record<string, string> {
  return {
    ...(args.reason === undefined ? {} : encodedReasonHeaders(args.reason)),
    [ATTRIBUTION_HEADERS.source]: attributionSourceValue(args.sources),
    ...(args.ticket
      ? { [ATTRIBUTION_HEADERS.ticketNumber]: args.ticket.number, [ATTRIBUTION_HEADERS.ticketSystem]: args.ticket.system }
      : {}),
  };
}

/** The sentence of a failure the service itself wrote, or undefined for anything else (a gateway's body). */
function serviceSentence(response: Response, body: string): string | undefined {
  if (!(response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/plain')) return undefined;
  const failure = parseFailureBody(body);
  return failure ? `${failure.sentence} (request id: ${failure.requestId})` : undefined;
}

/** One upstream answer that is not a 200, as the sentence the user reads. */
function upstreamFailure(response: Response, body: string, args: BrokeredArgs, ticketSystem: string): ToolFailure {
  const status = response.status;
  const sentence = serviceSentence(response, body);
  const wait = retryAfterSeconds(response.headers.get('retry-after'));
  const details = {
    upstreamStatus: status,
    serviceAnswer: sentence !== undefined,
    apiErrorType: response.headers.get('x-amzn-errortype') ?? undefined,
  };
  if (status === 404 && sentence) return new ToolFailure(TOOL_SENTENCES.notFound(args.agent_id));
  // The service names its headers; an assistant sends the tool's ticket argument instead.
  if (status === 403 && sentence?.startsWith(TICKET_REQUIRED)) {
    return new ToolFailure(
      `${TOOL_SENTENCES.ticketRequired(ticketSystem)} (request id: ${parseFailureBody(body)?.requestId ?? 'unknown'})`,
    );
  }
  if ((status === 400 || status === 403) && sentence) {
    // The service refused the broker itself: no user can fix that. Its sentence is still the answer.
    const brokerRefused = Object.values(BROKER_REFUSALS).some((refusal) => sentence.startsWith(refusal));
    return brokerRefused ? misconfiguration(sentence, details) : new ToolFailure(sentence);
  }
  if (status === 401 || status === 403 || status === 404) return misconfiguration(TOOL_SENTENCES.misconfigured, details);
  if (status === 429) return new ToolFailure(TOOL_SENTENCES.busy(SERVICE, wait));
  if (status === 503) return new ToolFailure(TOOL_SENTENCES.unavailable(SERVICE, wait));
  if (status === 504) return new ToolFailure(TOOL_SENTENCES.timedOut(SERVICE, wait));
  logger.error('observations service failed', details);
  return new ToolFailure(TOOL_SENTENCES.failed(SERVICE));
}

async function getDashboard(
  observationsUrl: string,
  args: BrokeredArgs,
  token: string,
  signal: AbortSignal,
): Promise<{ response: Response; body: string }> {
  try {
    // Traced by Powertools Tracer (lib/observability/tracer.ts): a subsegment of its own, and the
    // X-Amzn-Trace-Id header it adds (Lambda's own where no tracer is loaded), so the private API
    // and the observations function join this trace.
    const response = await fetch(requestUrl(observationsUrl, args), {
      headers: {
        Authorization: `Bearer ${token}`,
        Accept: 'application/json',
        ...attributionHeaders(args),
        ...traceHeaderWithoutTracer(),
      },
      signal,
      redirect: 'manual',
    });
    return { response, body: await response.text() };
  } catch (error) {
    if (signal.aborted) throw new ToolFailure(TOOL_SENTENCES.timedOut(SERVICE, 5));
    logger.warn('observations service unreachable', { cause: (error as Error).name });
    throw new ToolFailure(TOOL_SENTENCES.unavailable(SERVICE, 5));
  }
}

/**
 * Refuses an exchanged token whose endpoint scope differs from the user's: an issuer that drops the
 * scope claim in the exchange would widen a scoped user to the whole tenant at the observations
 * service. The broker reads its own token's claims only to compare them (the service verifies the
 * token); a token it cannot read is left to the service, which refuses it.
 */
function assertScopeCarried(token: string, scope: EndpointScope, claim: string): void {
  let claims: Record<string, unknown>;
  try {
    claims = decodeJwt(token);
  } catch {
    return;
  }
  const exchanged = readScopeClaim(claims[claim]);
  if (!sameScope(exchanged, scope)) {
    throw misconfiguration(TOOL_SENTENCES.misconfigured, {
      cause: `the token exchange did not carry the "${claim}" claim unchanged`,
      exchangedScope: exchanged === 'invalid' ? 'invalid' : exchanged.kind,
      userScope: scope.kind,
    });
  }
}

/** What the hop is made with: the broker's client at the issuer, the private operation's address, audience and scope. */
export type BrokerHopConfig = Pick<
  Settings,
  'tokenEndpoint' | 'brokerClientId' | 'observationsUrl' | 'observationsAudience' | 'observationsScope' | 'scopeClaim' | 'ticketSystem'
>;

/** The hop, as the observations tool calls it. */
export interface BrokerHop {
  /**
   * Reads one endpoint's dashboard for the user behind `subjectToken`. A token from the cache that
   * the service refuses (401) is exchanged again once: the issuer may have rotated its keys. An
   * exchanged token that does not carry the user's endpoint scope is never sent.
   */
  readDashboard(read: BrokeredRead): Promise<DashboardRead>;
  /**
   * Puts the person's refusal on record: the private operation audits it as a refused request (403)
   * and reads nothing. Gives the sentence the user reads, with the request id of its audit item when
   * the operation answered as it should; the refusal stands whatever the hop did (nothing is read
   * either way), and a hop that did not record it is logged.
   */
  recordPersonRefusal(read: BrokeredRead, sentence: string): Promise<string>;
}

/** The MCP function's hop, made once at its init: its exchanged tokens are kept across invocations. */
export function brokerHop(cfg: BrokerHopConfig, secret: BrokerSecret): BrokerHop {
  const exchangedTokens = new ExchangedTokenCache();

  /**
   * The exchanged token for this user: from the cache, or one exchange at the issuer shared by every
   * call that needs it meanwhile (single flight). The exchange has its own 5 s bound, so one
   * caller's deadline does not fail the others that wait on it; each waiter stops at its own.
   */
  async function observationsToken(
    subjectToken: string,
    subjectExpiresAt: number | undefined,
    signal: AbortSignal,
  ): Promise<{ token: string; cached: boolean }> {
    const exchange = async (): Promise<ExchangedToken> =>
      exchangeToken({
        tokenEndpoint: cfg.tokenEndpoint,
        clientId: cfg.brokerClientId,
        clientSecret: await secret.read(AbortSignal.timeout(5_000)),
        subjectToken,
        audience: cfg.observationsAudience,
        scope: cfg.observationsScope,
        signal: AbortSignal.timeout(5_000),
      });
    try {
      return await exchangedTokens.obtain(subjectToken, cfg.observationsAudience, exchange, { subjectExpiresAt, signal });
    } catch (error) {
      if (signal.aborted) throw new ToolFailure(TOOL_SENTENCES.timedOut(SIGN_IN, 5));
      throw exchangeFailure(error, secret);
    }
  }

  async function readDashboard(read: BrokeredRead): Promise<DashboardRead> {
    let { token, cached } = await observationsToken(read.subjectToken, read.subjectExpiresAt, read.signal);
    assertScopeCarried(token, read.scope, cfg.scopeClaim);
    let { response, body } = await getDashboard(cfg.observationsUrl, read.args, token, read.signal);
    if (response.status === 401 && cached) {
      exchangedTokens.forget(read.subjectToken, cfg.observationsAudience);
      ({ token, cached } = await observationsToken(read.subjectToken, read.subjectExpiresAt, read.signal));
      assertScopeCarried(token, read.scope, cfg.scopeClaim);
      ({ response, body } = await getDashboard(cfg.observationsUrl, read.args, token, read.signal));
    }
    if (response.status === 401) exchangedTokens.forget(read.subjectToken, cfg.observationsAudience);
    if (response.status !== 200) throw upstreamFailure(response, body, read.args, cfg.ticketSystem);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    if (!EndpointDashboard.safeParse(parsed).success) {
      logger.error('observations service answered an unreadable dashboard', { bytes: body.length });
      throw new ToolFailure(TOOL_SENTENCES.unreadable(SERVICE));
    }
    return { dashboard: parsed as EndpointDashboard, auditId: response.headers.get('x-audit-id') ?? undefined };
  }

  return {
    readDashboard,
    async recordPersonRefusal(read, sentence) {
      try {
        await readDashboard(read);
        logger.error('the observations service answered a refused request with data; it was not passed on');
      } catch (error) {
        if (error instanceof ToolFailure && error.message.startsWith(sentence)) return error.message;
        logger.error("the person's refusal could not be recorded", { error: (error as Error)?.name, message: (error as Error)?.message });
      }
      return sentence;
    },
  };
}
