import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EndpointScope, UNSCOPED } from '../../lib/auth/endpoint-scope.js';
import { type AgentRecords, agentRecordPages } from '../../lib/store/agents.js';

/**
 * Every agent of a tenant, collected, with the number of Query pages it took: for tests that need
 * to know a tenant really spans several pages (the service itself streams the pages).
 */
export async function listTenantAgentRecords(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  scope: EndpointScope = UNSCOPED,
): Promise<{ agents: AgentRecords[]; unreadable: number; outOfScope: number; pages: number }> {
  const agents: AgentRecords[] = [];
  let unreadable = 0;
  let outOfScope = 0;
  let pages = 0;
  for await (const page of agentRecordPages(db, table, tenantId, scope)) {
    pages += page.queryPages;
    unreadable += page.unreadable;
    outOfScope += page.outOfScope;
    for (const agent of page.agents) agents.push(agent);
  }
  return { agents, unreadable, outOfScope, pages };
}
