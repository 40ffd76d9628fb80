import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { config } from '../config.js';
import { logger } from '../observability/logger.js';
import type { ObservationsContext } from './context.js';
import { parseAttribution, parseObservationsQuery } from './request.js';

/** Parses the query and the attribution headers onto the context; any invalid part is a 400. */
export function observationsRequest(): MiddlewareObj<APIGatewayProxyEvent, unknown, Error, ObservationsContext> {
  const parseRequest = async (request: Request<APIGatewayProxyEvent, unknown, Error, ObservationsContext>): Promise<void> => {
    request.context.query = parseObservationsQuery(request.event);
    request.context.attribution = parseAttribution(request.event, config().ticketSystem);
    // The reason's text stays in the audit table; logs get its length only (docs/operations.md).
    logger.appendKeys({
      agentId: request.context.query.agent_id,
      reasonLength: request.context.attribution.reason.length,
      ticketNumber: request.context.attribution.ticketNumber,
    });
  };
  return { before: parseRequest };
}
