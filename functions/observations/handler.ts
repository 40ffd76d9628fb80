import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { jsonResponse } from '../../lib/http.js';
import { invocationDeadline } from '../../lib/middleware/deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';
import { logger } from '../../lib/observability/logger.js';
import { recordItemsReturned } from '../../lib/observability/metrics.js';
import { auditTrail } from '../../lib/observations/audit-trail.js';
import { brokeredCaller } from '../../lib/observations/brokered-caller.js';
import type { ObservationsContext } from '../../lib/observations/context.js';
import { observationsRequest } from '../../lib/observations/observations-request.js';
import { readEndpointObservations } from '../../lib/observations/read.js';

/**
 * GET /api/mcp/endpoint (getEndpointObservations) behind the private REST API, payload 1.0.
 * The middlewares establish caller, query and attribution, and audit the request.
 */
const getEndpointObservations = async (_event: APIGatewayProxyEvent, context: ObservationsContext): Promise<APIGatewayProxyResult> => {
  const { caller, query, attribution } = context;
  if (!caller?.tenantId || caller.scope === 'invalid' || !query || !attribution) throw new Error('observations middlewares did not run');
  const dashboard = await readEndpointObservations({
    tenantId: caller.tenantId,
    scope: caller.scope,
    query,
    attribution,
    now: new Date(),
    signal: context.deadline,
  });
  recordItemsReturned(dashboard.history?.length ?? 0);
  logger.info('dashboard read', {
    status: dashboard.status,
    historyLength: dashboard.history?.length ?? null,
    findings: dashboard.findings?.length ?? 0,
  });
  return jsonResponse(200, dashboard);
};

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ObservationsContext>(HANDLER_OPTIONS)
  .use(invocationDeadline())
  .use(observability({ operation: 'getEndpointObservations' }))
  .use(auditTrail())
  .use(brokeredCaller())
  .use(observationsRequest())
  .use(failureHandling())
  .handler(getEndpointObservations);
