import * as z from 'zod';
import { OBSERVATION_BOUNDS, TICKET_NUMBER_PATTERN } from './schemas.js';

/** The attribution headers of getEndpointObservations, by their lower-case names. */
export const ATTRIBUTION_HEADERS = Object.freeze({
  reason: 'x-service-reason',
  reasonEncoding: 'x-service-reason-encoding',
  ticketNumber: 'x-service-ticket-number',
  ticketSystem: 'x-service-ticket-system',
});

/**
 * How a reason in any script crosses an HTTP hop unchanged. Header values are bytes: Node's fetch
 * refuses characters above U+00FF and line breaks and trims surrounding spaces, and API Gateway
 * gives no promise about non-ASCII bytes. So a sender may percent-encode the reason's UTF-8
 * (RFC 3986, as `encodeURIComponent` does) and say so with `X-Service-Reason-Encoding: percent`;
 * without that header the value is taken literally, as before. The MCP broker always encodes.
 */
export const REASON_ENCODING = 'percent';

/** The reason as the broker sends it: percent-encoded UTF-8 plus the header that says so. */
export function encodedReasonHeaders(reason: string): Record<string, string> {
  return { 'X-Service-Reason': encodeURIComponent(reason), 'X-Service-Reason-Encoding': REASON_ENCODING };
}

/**
 * The reason a sender meant: the header value itself, or its percent-decoded UTF-8 when the
 * encoding header says `percent`. Undefined when the encoding is unknown or the value does not
 * decode (a stray `%`, bytes that are not UTF-8): the caller answers 400.
 */
export function decodedReason(value: string | undefined, encoding: string | undefined): string | undefined | null {
  if (value === undefined || encoding === undefined) return value;
  if (encoding.trim().toLowerCase() !== REASON_ENCODING) return null;
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/**
 * Attribution as the handler accepts it: a reason of 3 to 500 characters after trimming, and the
 * ticket number (pattern) with the ticket system (the one configured constant) both or neither.
 */
export function attributionSchema(ticketSystem: string) {
  return z
    .object({
      reason: z
        .string({ error: 'X-Service-Reason is required' })
        .trim()
        .min(OBSERVATION_BOUNDS.reason.min, `X-Service-Reason must be ${OBSERVATION_BOUNDS.reason.min} to ${OBSERVATION_BOUNDS.reason.max} characters`)
        .max(OBSERVATION_BOUNDS.reason.max, `X-Service-Reason must be ${OBSERVATION_BOUNDS.reason.min} to ${OBSERVATION_BOUNDS.reason.max} characters`),
      ticketNumber: z
        .string()
        .min(OBSERVATION_BOUNDS.ticketNumber.min, 'X-Service-Ticket-Number must not be empty')
        .max(OBSERVATION_BOUNDS.ticketNumber.max, 'X-Service-Ticket-Number must be at most 100 characters')
        .regex(TICKET_NUMBER_PATTERN, 'X-Service-Ticket-Number has characters outside its pattern')
        .optional(),
      ticketSystem: z.literal(ticketSystem, { error: `X-Service-Ticket-System must be "${ticketSystem}"` }).optional(),
    })
    .refine((a) => (a.ticketNumber === undefined) === (a.ticketSystem === undefined), {
      message: 'X-Service-Ticket-Number and X-Service-Ticket-System must be sent together',
    });
}
export type Attribution = z.output<ReturnType<typeof attributionSchema>>;
