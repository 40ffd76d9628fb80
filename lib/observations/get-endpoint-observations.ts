import type { ObservationsConfig } from '../config.js';
import { personRefusalSentence } from '../contract/attribution.js';
import type { EndpointDashboard } from '../contract/schemas.js';
import { httpError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { recordItemsReturned } from '../observability/metrics.js';
import { type JsonResult, jsonResponse } from '../responses.js';
import type { RestRequest } from '../rest-request.js';
import type { TenantStores } from '../store/tenant-client.js';
import { type AuditedRequest, auditAllowed, auditRefused } from './audit-trail.js';
import { allowedRead, verifyBrokeredCaller } from './brokered-caller.js';
import { attributionAsFarAsValid, parseAttribution, parseAttributionSources, parseObservationsQuery } from './query-and-attribution.js';
import { readEndpointObservations } from './read.js';

/** What the operation works with: the function's configuration, and its tenants' store clients (made at init). */
export interface ObservationsService {
  cfg: ObservationsConfig;
  stores: TenantStores;
}

/** The invocation an observations request runs in. */
export interface Invocation {
  /** Lambda's request id: the audit item's id, which every failure text quotes. */
  requestId: string;
  /** The invocation's deadline (lib/invocation-deadline.ts): every read, and a success's audit write, stop with it. */
  deadline: AbortSignal;
  /** Lambda's time left, in ms: a refusal's audit write may use a little more of it than the deadline leaves. */
  remainingMs: () => number;
}

/**
 * getEndpointObservations (`GET /api/mcp/endpoint`, behind the private REST API), step by step:
 * 1. verify the brokered caller: a token that does not verify is a 401 (nothing is known, nothing
 *    audited); from here on who asked is known, and every outcome is audited;
 * 2. refuse a caller that may not read (403), then parse the query and the attribution headers (400);
 *    a request whose `X-Service-Attribution-Source` says the person declined (or dismissed) the
 *    broker's question is refused (403) before any read, its audit item recording what was given;
 * 3. read the endpoint's dashboard (403 by the tenant's policy, 404, 502-504);
 * 4. write the audit item: a refusal's after it is known, keeping its answer if the write fails;
 *    a success's before any data leaves, failing the read (503, no data) if the write fails;
 * 5. answer the dashboard, naming its audit item (`X-Audit-Id`).
 */
export async function getEndpointObservations(
  { cfg, stores }: ObservationsService,
  request: RestRequest,
  invocation: Invocation,
): Promise<JsonResult> {
  const trail = { stores, cfg };
  const verified = await verifyBrokeredCaller(cfg, request, invocation.deadline);
  const audited: AuditedRequest = { requestId: invocation.requestId, apiRequestId: request.apiRequestId, caller: verified.caller };
  let dashboard: EndpointDashboard;
  try {
    const allowed = allowedRead(cfg, verified);
    const query = parseObservationsQuery(request);
    audited.query = query;
    const { ticketSystem } = cfg;
    const sources = parseAttributionSources(request);
    audited.sources = sources;
    const refusal = personRefusalSentence(sources);
    if (refusal !== undefined) {
      audited.attribution = attributionAsFarAsValid(request, ticketSystem);
      throw httpError(403, refusal);
    }
    const attribution = parseAttribution(request, ticketSystem, sources);
    audited.attribution = attribution;
    // The reason's text stays in the audit table; logs get its length only (docs/operations.md).
    logger.appendKeys({ agentId: query.agent_id, reasonLength: attribution.reason.length, ticketNumber: attribution.ticketNumber });
    dashboard = await readEndpointObservations(
      { reads: stores, cfg },
      { ...allowed, query, attribution, now: new Date(), signal: invocation.deadline },
    );
  } catch (error) {
    throw await auditRefused(trail, audited, error, invocation.remainingMs);
  }
  recordItemsReturned(dashboard.history?.length ?? 0);
  logger.info('dashboard read', {
    status: dashboard.status,
    historyLength: dashboard.history?.length ?? null,
    findings: dashboard.findings?.length ?? 0,
  });
  const auditId = await auditAllowed(trail, audited, invocation.deadline);
  return jsonResponse(200, dashboard, { 'X-Audit-Id': auditId });
}
