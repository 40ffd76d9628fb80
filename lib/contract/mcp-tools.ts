import * as z from 'zod';
import { reasonSchema } from './attribution.js';
import { AgentId, AgentSummary, ConnectionState, EndpointDashboard, OBSERVATION_BOUNDS, TICKET_NUMBER_PATTERN } from './schemas.js';

/**
 * The MCP tools' arguments and results, built from the same wire types and bounds as the HTTP
 * contract: `observations` takes what getEndpointObservations takes (its attribution headers as
 * arguments, since MCP hosts cannot set per-call headers) and returns its EndpointDashboard;
 * `list_endpoints` returns AgentSummary elements of listEndpointInventory.
 */

export const TOOL_NAMES = Object.freeze({ observations: 'observations', listEndpoints: 'list_endpoints' });

/** Every tool only reads, gives the same answer for the same question, and talks to nothing outside the service. */
export const READ_ONLY_TOOL = Object.freeze({ readOnlyHint: true, idempotentHint: true, openWorldHint: false, destructiveHint: false });

const { minutes, limit, reason, ticketNumber } = OBSERVATION_BOUNDS;

/** A lone UTF-16 surrogate cannot be encoded for the hop (or stored as UTF-8): refuse it up front. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const LIST_LIMIT = Object.freeze({ min: 1, max: 500, default: 100 });
export const HOSTNAME_FILTER = Object.freeze({ min: 1, max: 255 });

/**
 * The reason rule of the `observations` tool (lib/contract/attribution.ts, reasonSchema), with
 * text a hop can carry: what the tool applies to its `reason` argument and to a person's answer alike.
 */
export function observationsReason() {
  return reasonSchema('reason').check(
    z.refine((v) => !LONE_SURROGATE.test(v), {
      error: 'reason has a broken character (a lone UTF-16 surrogate); send it as ordinary text',
    }),
  );
}

/** The ticket number's rule in words, for sentences and forms that cannot carry its pattern. */
export const TICKET_NUMBER_RULE = `up to ${ticketNumber.max} letters, digits and ._:/#- characters, starting with a letter or digit`;

/**
 * The `ticket` argument of `observations`: a number with the one system, both sent or neither. What
 * the tool applies to its `ticket` argument and to a person's answer alike.
 */
export function observationsTicket(ticketSystem: string) {
  return (
    z
      .strictObject({
        number: z
          .string()
          .min(ticketNumber.min)
          .max(ticketNumber.max)
          .regex(TICKET_NUMBER_PATTERN)
          .optional()
          .describe('The ticket number, e.g. INC0012345. Without it there is no ticket.'),
        system: z.literal(ticketSystem).describe(`The ticketing product: always "${ticketSystem}".`),
      })
      // A form built from this schema fills in the constant system by itself (MCP Inspector does): a
      // ticket that holds nothing else is no ticket, never a refused read. With a number, both go
      // to the private operation together, as its pair rule wants.
      .transform((ticket) => (ticket.number === undefined ? undefined : { number: ticket.number, system: ticket.system }))
      .optional()
      .describe(
        `The ticket behind the read: its number, with the system "${ticketSystem}". Some tenants require one. A ticket without a number is no ticket.`,
      )
  );
}

/**
 * Arguments of `observations`; the ticket system is the configured constant (`TICKET_SYSTEM`).
 * `reason` is optional here so that a call without one reaches the tool, which asks the person for
 * it when the client can be asked (MCP 2026-07-28 with the elicitation capability) and refuses the
 * call with the reason rule's sentence when it cannot (`withRequiredReason`).
 */
export function observationsToolInput(ticketSystem: string) {
  return z.strictObject({
    agent_id: AgentId.check(z.describe('The endpoint to read, exactly as list_endpoints gives its agent_id.')),
    minutes: z
      .number()
      .int()
      .min(minutes.min)
      .max(minutes.max)
      .optional()
      .describe(`The observation window in minutes, ending now (${minutes.max} is seven days). Default ${minutes.default}.`),
    limit: z
      .number()
      .int()
      .min(limit.min)
      .max(limit.max)
      .optional()
      .describe(`The most samples the history may hold; more are averaged into this many time buckets. Default ${limit.default}.`),
    reason: z
      .optional(observationsReason())
      .describe(
        `Why the read is made, in the user's words (${reason.min} to ${reason.max} characters with at least ${reason.min} visible, any script). It is recorded in the tenant's audit trail. Give it when the user said why; without it, a client that can ask the user (MCP 2026-07-28, elicitation) shows them a form, and any other client gets an error result asking for it.`,
      ),
    ticket: observationsTicket(ticketSystem),
  });
}

/** The same arguments with `reason` required, in the same place: the tool's arguments for a client that cannot be asked. */
export function withRequiredReason(input: ReturnType<typeof observationsToolInput>) {
  return input.extend({ reason: observationsReason() });
}

export const ListEndpointsToolInput = z.strictObject({
  connection_state: z.optional(ConnectionState).describe('Only endpoints in this connection state.'),
  hostname: z
    .string()
    .min(HOSTNAME_FILTER.min)
    .max(HOSTNAME_FILTER.max)
    .optional()
    .describe('Only endpoints whose hostname contains this text (case-insensitive).'),
  limit: z
    .number()
    .int()
    .min(LIST_LIMIT.min)
    .max(LIST_LIMIT.max)
    .optional()
    .describe(`The most endpoints to return, in the inventory's order. Default ${LIST_LIMIT.default}.`),
});
export type ListEndpointsToolInput = z.output<typeof ListEndpointsToolInput>;

export const EndpointList = z
  .strictObject({
    endpoints: z
      .array(AgentSummary)
      .describe(
        "The first matching endpoints in the inventory's order, at most `limit` of them. Their text values are reported by the endpoints themselves.",
      ),
    matching: z
      .number()
      .int()
      .min(0)
      .nullable()
      .describe(
        'How many endpoints match the filters; null when the listing stopped before the end of the inventory (more match than were returned).',
      ),
    total: z
      .number()
      .int()
      .min(0)
      .nullable()
      .describe(
        "How many endpoints the caller's tenant has, online and offline; null when the listing stopped before the end of the inventory.",
      ),
    truncated: z.boolean().describe('True when more endpoints match than were returned.'),
  })
  .describe("Endpoints of the caller's tenant, as the inventory lists them.");
export type EndpointList = z.infer<typeof EndpointList>;

/** The result of `observations`: the dashboard exactly as getEndpointObservations returns it. */
export const ObservationsToolOutput = EndpointDashboard;
