import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The one structured (JSON) logger. It never logs a token, an Authorization header or the text of
 * an attribution reason: see docs/operations.md.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'endpoint-read-service' });
