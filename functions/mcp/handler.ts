import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { MCP_CONFIG } from '../../lib/config.js';
import { type DeadlineContext, deadlineOf } from '../../lib/invocation-deadline.js';
import { mcpCorsRules } from '../../lib/mcp/cors.js';
import { mcpDoor, serveMcpDoor, upstreamDeadline } from '../../lib/mcp/door-routes.js';
import { invocationDeadline } from '../../lib/middleware/context-deadline.js';
import { admittedOriginsCors } from '../../lib/middleware/cors.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';
import type { JsonResult } from '../../lib/responses.js';
import { restRequest } from '../rest-event.js';

/** The door, made once at init from the function's configuration: a missing or bad variable fails the init, naming it. */
const door = mcpDoor(MCP_CONFIG.parse(process.env));

/**
 * POST /api/mcp (the MCP service: tools `observations` and `list_endpoints`) on the public REST
 * API, payload 1.0: the event read into a plain request, then the door. The broker of the
 * observations read. Its CORS preflight and the RFC 9728 metadata of both doors are API Gateway's
 * own answers (infra/static-answers.ts).
 */
async function serveMcp(event: APIGatewayProxyEvent, context: DeadlineContext): Promise<JsonResult> {
  const request = restRequest(event);
  return serveMcpDoor(door, request, upstreamDeadline(door.cfg, context.deadline ?? deadlineOf(context)));
}

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, DeadlineContext>(HANDLER_OPTIONS)
  .use(invocationDeadline())
  .use(observability({ operation: 'mcp' }))
  .use(admittedOriginsCors(mcpCorsRules(door.cfg)))
  .use(failureHandling())
  .handler(serveMcp);
