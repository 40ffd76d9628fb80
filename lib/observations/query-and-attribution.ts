import {
  ATTRIBUTION_HEADERS,
  ATTRIBUTION_SOURCE_RULE,
  type Attribution,
  type AttributionSources,
  attributionSchema,
  decodedReason,
  parsedAttributionSources,
  REASON_ENCODING,
} from '../contract/attribution.js';
import { OBSERVATION_BOUNDS, ObservationsQuery } from '../contract/schemas.js';
import { httpError } from '../errors.js';
import { type RestRequest, singleHeader, singleQueryValues } from '../rest-request.js';

export type { Attribution, AttributionSources };

const AGENT_ID_RULE = `Query parameter agent_id is required and must be ${OBSERVATION_BOUNDS.agentId.min} to ${OBSERVATION_BOUNDS.agentId.max} characters.`;
const QUERY_RULES: Record<string, string> = {
  agent_id: AGENT_ID_RULE,
  minutes: `Query parameter minutes must be a whole number from ${OBSERVATION_BOUNDS.minutes.min} to ${OBSERVATION_BOUNDS.minutes.max}.`,
  limit: `Query parameter limit must be a whole number from ${OBSERVATION_BOUNDS.limit.min} to ${OBSERVATION_BOUNDS.limit.max}.`,
};

/**
 * The query of getEndpointObservations: `agent_id` (1-128 characters), `minutes` (5-10080, default
 * 60), `limit` (1-500, default 100). Digits only, so `5.5`, `1e2`, `+5` and empty values are 400s, as
 * are repeated and unknown parameters.
 */
export function parseObservationsQuery(request: Pick<RestRequest, 'query'>): ObservationsQuery {
  const raw = singleQueryValues(request);
  for (const name of Object.keys(raw)) {
    if (!Object.hasOwn(QUERY_RULES, name)) throw httpError(400, `Unknown query parameter ${JSON.stringify(name.slice(0, 40))}.`);
  }
  const parsed = ObservationsQuery.safeParse(raw);
  if (!parsed.success) {
    const field = String(parsed.error.issues[0]?.path[0] ?? 'agent_id');
    throw httpError(400, QUERY_RULES[field] ?? AGENT_ID_RULE);
  }
  return parsed.data;
}

/**
 * The attribution headers: a reason of 3-500 characters after trimming (percent-decoded first when
 * `X-Service-Reason-Encoding: percent` says so), and ticket number and ticket system (the
 * configured constant) together or not at all. Repeated headers are 400s.
 */
export function parseAttribution(request: Pick<RestRequest, 'headers'>, ticketSystem: string, sources?: AttributionSources): Attribution {
  const reason = decodedReason(
    singleHeader(request, ATTRIBUTION_HEADERS.reason, 'X-Service-Reason'),
    singleHeader(request, ATTRIBUTION_HEADERS.reasonEncoding, 'X-Service-Reason-Encoding'),
  );
  if (reason === null) {
    throw httpError(400, `X-Service-Reason-Encoding must be "${REASON_ENCODING}" and X-Service-Reason valid percent-encoded UTF-8.`);
  }
  const parsed = attributionSchema(ticketSystem).safeParse({
    reason,
    ticketNumber: singleHeader(request, ATTRIBUTION_HEADERS.ticketNumber, 'X-Service-Ticket-Number'),
    ticketSystem: singleHeader(request, ATTRIBUTION_HEADERS.ticketSystem, 'X-Service-Ticket-System'),
  });
  if (!parsed.success) throw httpError(400, `${parsed.error.issues[0]?.message ?? 'The attribution headers are invalid'}.`);
  // A source is named for the ticket exactly when one is sent: a source of nothing, or a ticket of no source, is a broker's mistake.
  if (sources && (sources.ticket !== undefined) !== (parsed.data.ticketNumber !== undefined)) {
    throw httpError(400, 'X-Service-Attribution-Source names a ticket source exactly when a ticket is sent.');
  }
  return parsed.data;
}

/**
 * `X-Service-Attribution-Source`, an extension of ours the MCP broker sends: where the reason and
 * the ticket came from (lib/contract/attribution.ts). Undefined when the header is absent (a
 * caller that does not say); a value outside its rule, or a repeated header, is a 400.
 */
export function parseAttributionSources(request: Pick<RestRequest, 'headers'>): AttributionSources | undefined {
  const value = singleHeader(request, ATTRIBUTION_HEADERS.source, 'X-Service-Attribution-Source');
  if (value === undefined) return undefined;
  const sources = parsedAttributionSources(value);
  if (!sources) throw httpError(400, ATTRIBUTION_SOURCE_RULE);
  return sources;
}

/**
 * What a refused request's audit item can still record of its attribution: the reason when it
 * follows its rule, the ticket when both its headers do; a value that breaks its rule is left out.
 */
export function attributionAsFarAsValid(request: Pick<RestRequest, 'headers'>, ticketSystem: string): Partial<Attribution> {
  const { shape } = attributionSchema(ticketSystem);
  const header = (key: keyof typeof ATTRIBUTION_HEADERS, display: string): string | undefined => {
    try {
      return singleHeader(request, ATTRIBUTION_HEADERS[key], display);
    } catch {
      return undefined;
    }
  };
  const reason = shape.reason.safeParse(
    decodedReason(header('reason', 'X-Service-Reason'), header('reasonEncoding', 'X-Service-Reason-Encoding')),
  );
  const ticketNumber = shape.ticketNumber.safeParse(header('ticketNumber', 'X-Service-Ticket-Number'));
  const ticketSystemHeader = shape.ticketSystem.safeParse(header('ticketSystem', 'X-Service-Ticket-System'));
  const ticket =
    ticketNumber.success && ticketSystemHeader.success && ticketNumber.data !== undefined && ticketSystemHeader.data !== undefined
      ? { ticketNumber: ticketNumber.data, ticketSystem: ticketSystemHeader.data }
      : {};
  return { ...(reason.success ? { reason: reason.data } : {}), ...ticket };
}
