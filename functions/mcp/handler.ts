import middy from '@middy/core';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mcpCors } from '../../lib/mcp/cors.js';
import { upstreamDeadline, serveMcpDoor } from '../../lib/mcp/door.js';
import { deadlineOf, invocationDeadline, type DeadlineContext } from '../../lib/middleware/deadline.js';
import { failureHandling, HANDLER_OPTIONS } from '../../lib/middleware/failures.js';
import { observability } from '../../lib/middleware/observability.js';

/**
 * POST /api/mcp (the MCP service: tools `observations` and `list_endpoints`), its CORS preflight
 * and its RFC 9728 metadata, on the public HTTP API, payload 2.0. The broker of the observations read.
 */
const serveMcp = async (event: APIGatewayProxyEventV2WithJWTAuthorizer, context: DeadlineContext): Promise<APIGatewayProxyStructuredResultV2> =>
  serveMcpDoor(event, upstreamDeadline(context.deadline ?? deadlineOf(context)));

export const handler = middy<APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2, Error, DeadlineContext>(HANDLER_OPTIONS)
  .use(invocationDeadline())
  .use(observability({ operation: 'mcp' }))
  .use(mcpCors())
  .use(failureHandling())
  .handler(serveMcp);
