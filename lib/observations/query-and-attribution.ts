import { ATTRIBUTION_HEADERS, type Attribution, attributionSchema, decodedReason, REASON_ENCODING } from '../contract/attribution.js';
import { OBSERVATION_BOUNDS, ObservationsQuery } from '../contract/schemas.js';
import { httpError } from '../errors.js';
import { type RestRequest, singleHeader, singleQueryValues } from '../rest-event.js';

export type { Attribution };

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
export function parseAttribution(request: Pick<RestRequest, 'headers'>, ticketSystem: string): Attribution {
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
  return parsed.data;
}
