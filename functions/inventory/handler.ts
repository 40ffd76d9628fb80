import middy from '@middy/core';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { identityFromClaims } from '../../lib/auth/identity.js';
import { config } from '../../lib/config.js';
import { listInventoryResponse } from '../../lib/inventory/list.js';
import { invocationDeadline, type DeadlineContext } from '../../lib/middleware/deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';
import { logger } from '../../lib/observability/logger.js';

/** GET /api/agents (listEndpointInventory) behind an HTTP API JWT authorizer, payload 2.0. */
const listEndpointInventory = async (event: APIGatewayProxyEventV2WithJWTAuthorizer, context: DeadlineContext): Promise<APIGatewayProxyStructuredResultV2> => {
  const caller = identityFromClaims(event.requestContext.authorizer?.jwt?.claims, config().tenantClaim);
  logger.appendKeys({ tenant: caller.tenantId, subject: caller.subject });
  return listInventoryResponse(caller.tenantId, new Date(), event.headers?.['accept-encoding'], context.deadline);
};

export const handler = middy<APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2, Error, DeadlineContext>(HANDLER_OPTIONS)
  .use(invocationDeadline())
  .use(observability({ operation: 'listEndpointInventory' }))
  .use(failureHandling())
  .handler(listEndpointInventory);
