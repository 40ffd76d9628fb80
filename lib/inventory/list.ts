import type { AgentSummary } from '../contract/schemas.js';
import { config } from '../config.js';
import { dependencyFailure } from '../errors.js';
import { logger } from '../observability/logger.js';
import { recordItemsReturned } from '../observability/metrics.js';
import { listTenantAgentRecords } from '../store/agents.js';
import { dynamo } from '../store/client.js';
import { mergeInventory } from './merge.js';

/**
 * listEndpointInventory: the tenant's whole inventory at `now`. A failed read throws (503/504),
 * so it can never turn into `200 []`.
 */
export async function listInventory(tenantId: string, now: Date): Promise<AgentSummary[]> {
  const cfg = config();
  let records;
  try {
    records = await listTenantAgentRecords(dynamo(), cfg.dataTable, tenantId);
  } catch (error) {
    throw dependencyFailure(error, 'inventory store');
  }
  if (records.invalid > 0) {
    logger.warn('skipped agent records that do not parse', { invalidRecords: records.invalid });
  }
  const agents = mergeInventory(records.durable, records.connections, {
    now,
    onlineGraceSeconds: cfg.onlineGraceSeconds,
  });
  logger.info('inventory listed', { agents: agents.length, queryPages: records.pages });
  recordItemsReturned('listEndpointInventory', agents.length);
  return agents;
}
