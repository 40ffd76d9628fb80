import { auditedScope } from '../auth/endpoint-scope.js';
import type { Settings } from '../config.js';
import type { ObservationsQuery } from '../contract/schemas.js';
import { clientFailure, httpStatusOf, retryLater } from '../errors.js';
import { deadlineOf } from '../invocation-deadline.js';
import { logger } from '../observability/logger.js';
import { recordAuditWrite } from '../observability/metrics.js';
import { type AuditItem, putAuditItem } from '../store/audit.js';
import type { TenantStores } from '../store/tenant-client.js';
import type { BrokeredCaller } from './brokered-caller.js';
import type { Attribution, AttributionSources } from './query-and-attribution.js';

/** Where the audit items go: the audit table, with the tenants' audit clients. */
export interface AuditTrail {
  stores: Pick<TenantStores, 'forAudit'>;
  cfg: Pick<Settings, 'auditTable'>;
}

/**
 * One audit item per authenticated request (once the bearer token verified), allowed or refused:
 * what it records is what the request got to, so a refusal before the query was read has no
 * agent_id.
 */
export interface AuditedRequest {
  /** Lambda's request id: the audit id, and the one every failure text quotes ("request id: …") and every log line carries (correlation_id). */
  requestId: string;
  /** API Gateway's request id, as in the API's access log. */
  apiRequestId: string | null;
  caller: BrokeredCaller;
  query?: ObservationsQuery;
  /** The attribution as far as it followed its rules: all of it once parsed; a refused request's may lack the reason. */
  attribution?: Partial<Attribution>;
  /** Where the reason and the ticket came from, when the caller said (the MCP broker does). */
  sources?: AttributionSources | undefined;
}

function auditItem(request: AuditedRequest, statusCode: number): AuditItem {
  const { caller, query, attribution, sources } = request;
  return {
    audit_id: request.requestId,
    request_id: request.requestId,
    api_request_id: request.apiRequestId,
    at: new Date().toISOString(),
    tenant_id: caller.tenantId,
    subject: caller.subject,
    broker: caller.broker,
    agent_id: query?.agent_id ?? null,
    scope: auditedScope(caller.scope),
    reason: attribution?.reason ?? null,
    ticket_number: attribution?.ticketNumber ?? null,
    ticket_system: attribution?.ticketSystem ?? null,
    reason_source: sources?.reason ?? null,
    ticket_source: sources?.ticket ?? null,
    minutes: query?.minutes ?? null,
    limit: query?.limit ?? null,
    outcome: statusCode < 400 ? 'allowed' : statusCode < 500 ? 'denied' : 'failed',
    status_code: statusCode,
  };
}

/** Puts the item with a client that may put only into its tenant's audit partition (when fencing is on). */
async function write(trail: AuditTrail, item: AuditItem, signal: AbortSignal): Promise<void> {
  try {
    await putAuditItem(await trail.stores.forAudit(item.tenant_id, signal), trail.cfg.auditTable, item, signal);
  } catch (error) {
    recordAuditWrite('failed');
    throw error;
  }
  recordAuditWrite('ok');
}

/**
 * Audits a read about to return its data, within the invocation's deadline, and gives the audit
 * id its answer names (`X-Audit-Id`). Data leaves only after its item is written: when the write
 * fails (or the deadline passes), the read fails with a 503 and no data, and nothing else is
 * written for it (docs/operations.md).
 */
export async function auditAllowed(trail: AuditTrail, request: AuditedRequest, deadline: AbortSignal): Promise<string> {
  const item = auditItem(request, 200);
  try {
    await write(trail, item, deadline);
  } catch (cause) {
    logger.error('audit write failed; the read was refused', { auditId: item.audit_id, error: (cause as Error).name });
    throw retryLater(503, 'The read could not be audited, so no data was returned; try again later.', cause);
  }
  return item.audit_id;
}

/** A refusal's audit item may still use the time before Lambda's own cut (and middy's early answer). */
const REFUSAL_AUDIT_MARGIN_MS = 600;

/**
 * Audits a request refused with `error` (its status: the error's own, or 500 for anything
 * unexpected), and gives back the error to answer with, naming its audit item (`X-Audit-Id`) when
 * the item was written. The refusal keeps its answer when the write fails: the failure is logged
 * for the alarm (docs/operations.md). The write may use the invocation's time up to
 * REFUSAL_AUDIT_MARGIN_MS before Lambda's cut, so a read stopped by the deadline (a 504) is still
 * audited.
 */
export async function auditRefused(
  trail: AuditTrail,
  request: AuditedRequest,
  error: unknown,
  remainingMs: () => number,
): Promise<unknown> {
  const item = auditItem(request, httpStatusOf(error));
  try {
    await write(trail, item, deadlineOf({ getRemainingTimeInMillis: remainingMs }, REFUSAL_AUDIT_MARGIN_MS));
  } catch (cause) {
    logger.error('audit write failed for a refused request', {
      auditId: item.audit_id,
      status: item.status_code,
      error: (cause as Error).name,
    });
    return error;
  }
  const failure = clientFailure(error);
  failure.headers = { ...failure.headers, 'X-Audit-Id': item.audit_id };
  return failure;
}
