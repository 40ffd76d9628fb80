import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type AuthorizerAnswer, authorizeRequest, type DoorRequest, UNAUTHORIZED } from '../../lib/auth/authorizer.js';
import { AUTHORIZER_CONFIG } from '../../lib/config.js';
import type { DeadlineContext } from '../../lib/invocation-deadline.js';
import { invocationDeadline } from '../../lib/middleware/context-deadline.js';
import { HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { authorizerObservability } from '../../lib/middleware/observability.js';
import { headerValues } from '../../lib/rest-request.js';
import { restRequest } from '../rest-event.js';

/** The function's configuration, read once at init: a missing or bad variable fails the init, naming it. */
const cfg = AUTHORIZER_CONFIG.parse(process.env);

/** What the authorizer judges of API Gateway's REQUEST authorizer event (payload 1.0): the door, the method, the tokens sent. */
function doorRequest(event: APIGatewayRequestAuthorizerEvent): DoorRequest {
  const request = restRequest(event);
  return { resource: request.resource, methodArn: event.methodArn, authorizations: headerValues(request, 'authorization') };
}

/**
 * The public REST API's token authorizer (a REQUEST authorizer for each door, lib/auth/public-doors.ts):
 * verifies the bearer token for the door asked and answers Allow with the caller in its context,
 * a refusal, or a failure (503), as API Gateway expects (lib/auth/authorizer.ts).
 */
async function authorizeToken(event: APIGatewayRequestAuthorizerEvent, context: DeadlineContext): Promise<AuthorizerAnswer> {
  const request = doorRequest(event);
  return authorizeRequest(cfg, request, context.deadline);
}

export const handler = middy<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult, Error, DeadlineContext>(HANDLER_OPTIONS)
  .use(invocationDeadline())
  .use(authorizerObservability({ refusalMessage: UNAUTHORIZED }))
  .handler(authorizeToken);
