import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { AttributionSource } from '../contract/attribution.js';
import { auditKey } from '../data-format/keys.js';

/** One audited observations request (allowed or denied), as stored (and as `npm run audit` prints it). */
export interface AuditItem {
  audit_id: string;
  /** The Lambda request id: the one a failure text quotes as "request id", and the logs' correlation_id. */
  request_id: string;
  /** API Gateway's request id, as in the API's access log. */
  api_request_id: string | null;
  at: string;
  tenant_id: string | null;
  subject: string | null;
  broker: string | null;
  agent_id: string | null;
  /**
   * The endpoint scope the read was made under (lib/auth/endpoint-scope.ts auditedScope): null when
   * the token carried no scope claim (the whole tenant), `"*"`, the group names, or `"invalid"`.
   */
  scope: string | string[] | null;
  reason: string | null;
  ticket_number: string | null;
  ticket_system: string | null;
  /**
   * Where the reason came from, as the MCP broker said: `argument` (the assistant's tool
   * arguments), `person` (the person's answer when the tool asked), `declined` / `cancelled` (the
   * person was asked and gave none: the request was refused); null when the caller did not say.
   */
  reason_source: AttributionSource | null;
  /** Where the ticket came from, in the same words; null when no ticket was sent (or the caller did not say). */
  ticket_source: AttributionSource | null;
  minutes: number | null;
  limit: number | null;
  /** allowed: data was returned; denied: a 4xx; failed: a dependency or internal failure. */
  outcome: 'allowed' | 'denied' | 'failed';
  status_code: number;
}

/** Every audit put is conditional on this: it never overwrites, so an audit trail cannot be rewritten. */
export const AUDIT_PUT_CONDITION = 'attribute_not_exists(pk)';

/** The stored form of an audit item: its key (time, then audit id, in its tenant's partition) and its fields. */
export function auditRecord(item: AuditItem): Record<string, unknown> {
  return { ...auditKey(item.tenant_id, new Date(item.at), item.audit_id), ...item };
}

/**
 * Writes one audit item; never overwrites (the put is conditional on the key not existing), so an
 * audit trail cannot be rewritten through this path.
 */
export async function putAuditItem(db: DynamoDBDocumentClient, table: string, item: AuditItem, signal?: AbortSignal): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: table,
      Item: auditRecord(item),
      ConditionExpression: AUDIT_PUT_CONDITION,
    }),
    signal ? { abortSignal: signal } : {},
  );
}
