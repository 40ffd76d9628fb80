import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { MCP_CONFIG } from '../../lib/config.js';
import { type DeadlineContext, deadlineOf } from '../../lib/invocation-deadline.js';
import { mcpCors } from '../../lib/mcp/cors.js';
import { mcpDoor, serveMcpDoor, upstreamDeadline } from '../../lib/mcp/door-routes.js';
import { invocationDeadline } from '../../lib/middleware/context-deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';

/** The door, made once at init from the function's configuration: a missing or bad variable fails the init, naming it. */
const door = mcpDoor(MCP_CONFIG.parse(process.env));

/**
 * POST /api/mcp (the MCP service: tools `observations` and `list_endpoints`), its CORS preflight
 * and the RFC 9728 metadata of both doors, on the public REST API, payload 1.0. The broker of the
 * observations read.
 */
const serveMcp = async (event: APIGatewayProxyEvent, context: DeadlineContext): Promise<APIGatewayProxyResult> =>
  serveMcpDoor(door, event, upstreamDeadline(door.cfg, context.deadline ?? deadlineOf(context)));

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, DeadlineContext>(HANDLER_OPTIONS)
  .use(invocationDeadline())
  .use(observability({ operation: 'mcp' }))
  .use(mcpCors(door.cfg))
  .use(failureHandling())
  .handler(serveMcp);
