import * as z from 'zod';
import { OBSERVATION_BOUNDS, TICKET_NUMBER_PATTERN } from './schemas.js';

/** The attribution headers of getEndpointObservations, by their lower-case names. */
export const ATTRIBUTION_HEADERS = Object.freeze({
  reason: 'x-service-reason',
  ticketNumber: 'x-service-ticket-number',
  ticketSystem: 'x-service-ticket-system',
});

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
