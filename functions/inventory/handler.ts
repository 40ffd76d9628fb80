import middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { callerFromAuthorizer } from '../../lib/auth/caller.js';
import type { EndpointScope } from '../../lib/auth/endpoint-scope.js';
import { INVENTORY_CONFIG } from '../../lib/config.js';
import { applyInventoryHeapFlags } from '../../lib/inventory/heap-growth.js';
import { type InventorySource, listInventoryResponse } from '../../lib/inventory/list.js';
import type { DeadlineContext } from '../../lib/invocation-deadline.js';
import type { StreamedResult } from '../../lib/json-array-stream.js';
import { invocationDeadline } from '../../lib/middleware/context-deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';
import { logger } from '../../lib/observability/logger.js';
import { annotateTenant } from '../../lib/observability/tracer.js';
import { headerValues } from '../../lib/rest-request.js';
import { tenantReads } from '../../lib/store/tenant-client.js';
import { restRequest } from '../rest-event.js';

/** The function's configuration, read once at init: a missing or bad variable fails the init, naming it. */
const cfg = INVENTORY_CONFIG.parse(process.env);
/** Where it reads the inventory: its tenants' store clients, made once, at init. */
const inventory: InventorySource = { reads: tenantReads(cfg), cfg };

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
  const caller = callerFromAuthorizer(request, 'inventory', cfg);
  // A list header may come as several lines; together they are one list (RFC 9110 §5.3).
  const acceptEncoding = headerValues(request, 'accept-encoding').join(', ') || undefined;
  return { tenantId: caller.tenantId, subject: caller.subject, scope: caller.scope, acceptEncoding };
}

/** GET /api/agents (listEndpointInventory): the tenant's inventory in the caller's scope, streamed as it is read. */
const listEndpointInventory = async (event: APIGatewayProxyEvent, context: DeadlineContext): Promise<StreamedResult> => {
  const { tenantId, subject, scope, acceptEncoding } = inventoryRequest(event);
  logger.appendKeys({ tenant: tenantId, subject });
  annotateTenant(tenantId);
  const answer = await listInventoryResponse(inventory, tenantId, scope, new Date(), acceptEncoding, context.deadline);
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
