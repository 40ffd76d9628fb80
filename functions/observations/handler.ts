import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { OBSERVATIONS_CONFIG } from '../../lib/config.js';
import { type DeadlineContext, deadlineOf } from '../../lib/invocation-deadline.js';
import { invocationDeadline } from '../../lib/middleware/context-deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';
import { getEndpointObservations, type ObservationsService } from '../../lib/observations/get-endpoint-observations.js';
import { tenantStores } from '../../lib/store/tenant-client.js';
import { restRequest } from '../rest-event.js';

/** The function's configuration, read once at init: a missing or bad variable fails the init, naming it. */
const cfg = OBSERVATIONS_CONFIG.parse(process.env);
/** What the operation works with: the configuration, and the tenants' store clients, made once, at init. */
const service: ObservationsService = { cfg, stores: tenantStores(cfg) };

/** GET /api/mcp/endpoint (getEndpointObservations) behind the private REST API, payload 1.0: the event read once, then the use case. */
async function serveObservations(event: APIGatewayProxyEvent, context: DeadlineContext): Promise<APIGatewayProxyResult> {
  const request = restRequest(event);
  return getEndpointObservations(service, request, {
    requestId: context.awsRequestId,
    deadline: context.deadline ?? deadlineOf(context),
    remainingMs: () => context.getRemainingTimeInMillis(),
  });
}

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, DeadlineContext>(HANDLER_OPTIONS)
  .use(invocationDeadline())
  .use(observability({ operation: 'getEndpointObservations' }))
  .use(failureHandling())
  .handler(serveObservations);
