import middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { callerFromAuthorizer } from '../../lib/auth/caller.js';
import type { EndpointScope } from '../../lib/auth/endpoint-scope.js';
import { applyInventoryHeapFlags } from '../../lib/inventory/heap-growth.js';
import { listInventoryResponse } from '../../lib/inventory/list.js';
import type { DeadlineContext } from '../../lib/invocation-deadline.js';
import type { StreamedResult } from '../../lib/json-array-stream.js';
import { invocationDeadline } from '../../lib/middleware/context-deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';
import { logger } from '../../lib/observability/logger.js';
import { headerValues, restRequest } from '../../lib/rest-event.js';

/**
 * What the inventory takes from the gateway's event (the public REST API, payload 1.0): the caller
 * the token authorizer handed over (tenant, subject, endpoint scope), and the client's
 * `Accept-Encoding`. The one place that knows the event's shape.
 */
function inventoryRequest(event: APIGatewayProxyEvent): {
  tenantId: string;
  subject: string;
  scope: EndpointScope;
  acceptEncoding: string | undefined;
} {
  const request = restRequest(event);
  const caller = callerFromAuthorizer(request, 'inventory');
  // A list header may come as several lines; together they are one list (RFC 9110 §5.3).
  const acceptEncoding = headerValues(request, 'accept-encoding').join(', ') || undefined;
  return { tenantId: caller.tenantId, subject: caller.subject, scope: caller.scope, acceptEncoding };
}

/** GET /api/agents (listEndpointInventory): the tenant's inventory in the caller's scope, streamed as it is read. */
const listEndpointInventory = async (event: APIGatewayProxyEvent, context: DeadlineContext): Promise<StreamedResult> => {
  const { tenantId, subject, scope, acceptEncoding } = inventoryRequest(event);
  logger.appendKeys({ tenant: tenantId, subject });
  const answer = await listInventoryResponse(tenantId, scope, new Date(), acceptEncoding, context.deadline);
  // The heap flags Node takes only on its command line, once per instance, once the first page is
  // read (lib/inventory/heap-growth.ts says why then; docs/decisions.md, "The inventory's heap").
  applyInventoryHeapFlags();
  return answer;
};

/**
 * A response-streaming Lambda (API Gateway `responseTransferMode: STREAM`): middy writes the
 * status and headers once the handler resolves (after the first page is read), then pipes the
 * body. A failure before that is a text/plain failure through the usual chain.
 */
export const handler = middy<APIGatewayProxyEvent, StreamedResult, Error, DeadlineContext>({ ...HANDLER_OPTIONS, streamifyResponse: true })
  .use(invocationDeadline())
  .use(observability({ operation: 'listEndpointInventory' }))
  .use(failureHandling())
  .handler(listEndpointInventory);
