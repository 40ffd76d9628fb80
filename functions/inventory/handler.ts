import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { callerFromAuthorizer } from '../../lib/auth/caller.js';
import { listInventoryResponse } from '../../lib/inventory/list.js';
import { invocationDeadline, type DeadlineContext } from '../../lib/middleware/deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';
import { headerValues } from '../../lib/rest-event.js';
import { logger } from '../../lib/observability/logger.js';

/** GET /api/agents (listEndpointInventory) on the public REST API behind its token authorizer, payload 1.0. */
const listEndpointInventory = async (event: APIGatewayProxyEvent, context: DeadlineContext): Promise<APIGatewayProxyResult> => {
  const caller = callerFromAuthorizer(event, 'inventory');
  logger.appendKeys({ tenant: caller.tenantId, subject: caller.subject });
  // A list header may come as several lines; together they are one list (RFC 9110 §5.3).
  const acceptEncoding = headerValues(event, 'accept-encoding').join(', ') || undefined;
  return listInventoryResponse(caller.tenantId, new Date(), acceptEncoding, context.deadline);
};

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, DeadlineContext>(HANDLER_OPTIONS)
  .use(invocationDeadline())
  .use(observability({ operation: 'listEndpointInventory' }))
  .use(failureHandling())
  .handler(listEndpointInventory);
