import middy from '@middy/core';
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { identityFromClaims } from '../../lib/auth/identity.js';
import { config } from '../../lib/config.js';
import { listInventoryResponse } from '../../lib/inventory/list.js';
import type { StreamedResult } from '../../lib/json-array-stream.js';
import { invocationDeadline, type DeadlineContext } from '../../lib/middleware/deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';
import { logger } from '../../lib/observability/logger.js';

type InventoryEvent = APIGatewayProxyEventV2WithJWTAuthorizer;

/**
 * What the inventory takes from the gateway's event: the authorizer's claims and the client's
 * `Accept-Encoding`. The one place that knows the event's shape (HTTP API payload 2.0 today).
 */
function inventoryRequest(event: InventoryEvent): { claims: Record<string, unknown> | undefined; acceptEncoding: string | undefined } {
  return { claims: event.requestContext.authorizer?.jwt?.claims, acceptEncoding: event.headers?.['accept-encoding'] };
}

/** GET /api/agents (listEndpointInventory): the tenant's whole inventory, streamed as it is read. */
const listEndpointInventory = async (event: InventoryEvent, context: DeadlineContext): Promise<StreamedResult> => {
  const { claims, acceptEncoding } = inventoryRequest(event);
  const caller = identityFromClaims(claims, config().tenantClaim);
  logger.appendKeys({ tenant: caller.tenantId, subject: caller.subject });
  return listInventoryResponse(caller.tenantId, new Date(), acceptEncoding, context.deadline);
};

/**
 * A response-streaming Lambda (API Gateway `responseTransferMode: STREAM`): middy writes the
 * status and headers once the handler resolves (after the first page is read), then pipes the
 * body. A failure before that is a text/plain failure through the usual chain.
 */
export const handler = middy<InventoryEvent, StreamedResult, Error, DeadlineContext>({ ...HANDLER_OPTIONS, streamifyResponse: true })
  .use(invocationDeadline())
  .use(observability({ operation: 'listEndpointInventory' }))
  .use(failureHandling())
  .handler(listEndpointInventory);
