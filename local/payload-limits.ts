import type { GatewayAnswer } from './listener-io.js';

/**
 * The two payload limits in front of a function, and what AWS answers past each: the one pair of
 * refusals no gateway response can word (API Gateway's important notes for REST APIs: customizing
 * the 413 REQUEST_TOO_LARGE response is not supported; a REQUEST_TOO_LARGE gateway response is
 * ignored, as those who tried report), so the local gateway answers them as AWS does:
 * - API Gateway's REST payload quota, 10 MB (10,485,760 bytes) of body, is checked before the
 *   authorizer: `413`, `Content-Type: text; charset=utf-8`, `HTTP content length exceeded 10485760 bytes.`;
 * - Lambda's synchronous invocation payload, 6 MB (6,291,456 bytes) of event JSON, is checked
 *   when API Gateway invokes the function: `413`, `application/json`, `x-amzn-ErrorType:
 *   BadRequestException`, `{"message": "Request Too Long"}` (as reported from AWS; Lambda's own
 *   guide says only that an invocation Lambda refuses is an error from API Gateway).
 */
export const PAYLOAD_LIMITS = Object.freeze({ apiGatewayBytes: 10_485_760, lambdaInvocationBytes: 6_291_456 });

/** AWS's own answer to a request past one of PAYLOAD_LIMITS (no CORS header: it is not a gateway response). */
export function payloadTooLargeAnswer(limit: keyof typeof PAYLOAD_LIMITS): GatewayAnswer {
  return limit === 'apiGatewayBytes'
    ? {
        status: 413,
        headers: { 'Content-Type': 'text; charset=utf-8' },
        body: `HTTP content length exceeded ${PAYLOAD_LIMITS.apiGatewayBytes} bytes.`,
      }
    : {
        status: 413,
        headers: { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'BadRequestException' },
        body: '{"message": "Request Too Long"}',
      };
}
