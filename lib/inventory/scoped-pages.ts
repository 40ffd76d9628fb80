import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { assertScopeAllowed, type EndpointScope } from '../auth/endpoint-scope.js';
import type { Settings } from '../config.js';
import { type AgentRecordsPage, agentRecordPages } from '../store/agents.js';
import { getTenantPolicy } from '../store/policy.js';

/**
 * The inventory's pages for a caller of this endpoint scope: agentRecordPages (which filters each
 * page by the scope, so nothing here holds more than one page), with a caller without the scope
 * claim refused (403 naming the claim) when the tenant's policy says `"scope": "required"`.
 *
 * Invariants: the policy is read only for such a caller, and at the same time as the first page,
 * so the first page waits for no extra round trip and a scoped caller costs no extra read; no page
 * is handed out before the policy allowed the caller; a refused caller's pages are closed unread.
 * Closing this generator closes the reader (no further page is read).
 */
export async function* inventoryPages(
  db: DynamoDBDocumentClient,
  cfg: Pick<Settings, 'dataTable' | 'scopeClaim'>,
  tenantId: string,
  scope: EndpointScope,
  signal?: AbortSignal,
): AsyncGenerator<AgentRecordsPage, void, undefined> {
  const pages = agentRecordPages(db, cfg.dataTable, tenantId, scope, signal);
  if (scope.kind !== 'unscoped') {
    yield* pages;
    return;
  }
  const allowed = getTenantPolicy(db, cfg.dataTable, tenantId, signal).then((policy) => assertScopeAllowed(scope, policy, cfg.scopeClaim));
  let first: IteratorResult<AgentRecordsPage, void>;
  try {
    [first] = await Promise.all([pages.next(), allowed]);
  } catch (error) {
    await pages.return(undefined).catch(() => undefined);
    throw error;
  }
  if (first.done) return;
  yield first.value;
  yield* pages;
}
