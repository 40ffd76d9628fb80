import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { auditedScope } from '../auth/endpoint-scope.js';
import { config } from '../config.js';
import { deadlineOf } from '../deadline.js';
import { retryLater } from '../errors.js';
import { logger } from '../observability/logger.js';
import { recordAuditWrite } from '../observability/metrics.js';
import { type AuditItem, putAuditItem } from '../store/audit.js';
import { tenantAuditDynamo } from '../store/tenant-client.js';
import type { ObservationsContext } from './context.js';

type ObservationsRequest = Request<APIGatewayProxyEvent, unknown, Error, ObservationsContext>;
interface Response {
  statusCode: number;
  headers?: Record<string, string | number | boolean>;
}

function auditItem(request: ObservationsRequest, statusCode: number): AuditItem {
  const { context } = request;
  const outcome: AuditItem['outcome'] = statusCode < 400 ? 'allowed' : statusCode < 500 ? 'denied' : 'failed';
  return {
    audit_id: context.awsRequestId,
    // The id every failure text quotes ("request id: …") and every log line carries (correlation_id).
    request_id: context.awsRequestId,
    api_request_id: request.event.requestContext?.requestId ?? null,
    at: new Date().toISOString(),
    tenant_id: context.caller?.tenantId ?? null,
    subject: context.caller?.subject ?? null,
    broker: context.caller?.broker ?? null,
    agent_id: context.query?.agent_id ?? null,
    scope: context.caller ? auditedScope(context.caller.scope) : null,
    reason: context.attribution?.reason ?? null,
    ticket_number: context.attribution?.ticketNumber ?? null,
    ticket_system: context.attribution?.ticketSystem ?? null,
    minutes: context.query?.minutes ?? null,
    limit: context.query?.limit ?? null,
    outcome,
    status_code: statusCode,
  };
}

/** A refusal's audit item may still use the time before Lambda's own cut (and middy's early answer). */
const REFUSAL_AUDIT_MARGIN_MS = 600;

/** Puts the item with a client that may put only into its tenant's audit partition (when fencing is on). */
async function write(item: AuditItem, signal: AbortSignal | undefined): Promise<void> {
  try {
    await putAuditItem(await tenantAuditDynamo(item.tenant_id, signal), config().auditTable, item, signal);
  } catch (error) {
    recordAuditWrite('failed');
    throw error;
  }
  recordAuditWrite('ok');
}

/**
 * One audit item per authenticated request (once the bearer token verified), allowed or denied.
 * A success leaves only after its item is written (X-Audit-Id names it); when that write fails, the
 * read fails with a 503 and no data. A refusal whose item cannot be written keeps its own answer;
 * the failure is logged for the alarm (see docs/operations.md).
 */
export function auditTrail(): MiddlewareObj<APIGatewayProxyEvent, unknown, Error, ObservationsContext> {
  const auditSuccess = async (request: ObservationsRequest): Promise<void> => {
    const response = request.response as Response;
    const item = auditItem(request, response.statusCode);
    request.context.auditSettled = true;
    try {
      // Within the invocation's deadline: a slow audit table is a 503 with no data, not a cut run.
      await write(item, request.context.deadline);
    } catch (cause) {
      logger.error('audit write failed; the read was refused', { auditId: item.audit_id, error: (cause as Error).name });
      throw retryLater(503, 'The read could not be audited, so no data was returned; try again later.', cause);
    }
    response.headers = { ...response.headers, 'X-Audit-Id': item.audit_id };
  };

  const auditRefusal = async (request: ObservationsRequest): Promise<void> => {
    if (request.context.auditSettled || !request.context.caller) return;
    const response = request.response as Response | undefined;
    const item = auditItem(request, response?.statusCode ?? 500);
    request.context.auditSettled = true;
    try {
      await write(item, deadlineOf(request.context, REFUSAL_AUDIT_MARGIN_MS));
      if (response) response.headers = { ...response.headers, 'X-Audit-Id': item.audit_id };
    } catch (cause) {
      logger.error('audit write failed for a refused request', {
        auditId: item.audit_id,
        status: item.status_code,
        error: (cause as Error).name,
      });
    }
  };

  return { after: auditSuccess, onError: auditRefusal };
}
