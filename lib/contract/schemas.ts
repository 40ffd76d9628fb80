import * as z from 'zod/mini';
import '../data-format/zod-english-locale.js';

/**
 * The wire types of the contract: the single source of truth for what leaves the service.
 * Every object is strict (undeclared properties are rejected); nullable fields are always present.
 */

/** RFC 3339 date-time with an explicit offset (we always emit UTC `Z`). */
export const DateTime = z.iso.datetime({ offset: true });

/**
 * An endpoint id: 1 to 128 characters, counted as JSON Schema counts them (code points, not the
 * UTF-16 units of `String.length`), so an id of 128 non-BMP characters is within the contract.
 */
const AGENT_ID_LENGTH = Object.freeze({ min: 1, max: 128 });
export const AgentId = z
  .string()
  .check(
    z.refine((v) => {
      const length = [...v].length;
      return length >= AGENT_ID_LENGTH.min && length <= AGENT_ID_LENGTH.max;
    }, `must be ${AGENT_ID_LENGTH.min} to ${AGENT_ID_LENGTH.max} characters`),
  )
  .check(z.meta({ minLength: AGENT_ID_LENGTH.min, maxLength: AGENT_ID_LENGTH.max }));

export const ConnectionState = z
  .enum(['connected', 'stale', 'disconnected', 'never_connected'])
  .check(
    z.describe(
      'connected: connection record connected and last heartbeat within the online grace; stale: connected but the heartbeat is older than the grace or absent; disconnected: the broker saw the agent disconnect; never_connected: no connection record.',
    ),
  );
export type ConnectionState = z.infer<typeof ConnectionState>;

export const Status = z
  .enum(['ok', 'warning', 'critical', 'unknown'])
  .check(z.describe('Ranked critical > warning > unknown > ok. unknown means no evidence, never healthy.'));
export type Status = z.infer<typeof Status>;

export const AgentSummary = z
  .strictObject({
    agent_id: AgentId,
    hostname: z.string(),
    os: z.string(),
    arch: z.string(),
    version: z.string(),
    is_online: z.boolean().check(z.describe('True exactly when connection_state is connected.')),
    connection_state: ConnectionState,
    client_id: z.optional(z.string()),
    connected_at: z.optional(DateTime),
    disconnected_at: z.optional(DateTime),
    enrolled_at: z.optional(DateTime),
    last_heartbeat: z.optional(DateTime).check(z.describe('The newer of the durable and the connection heartbeat.')),
    update_ring: z.optional(z.string()),
  })
  .check(z.describe('One endpoint of the tenant, online or offline. Optional fields are omitted when unknown.'));
export type AgentSummary = z.infer<typeof AgentSummary>;

export const AgentInventory = z
  .array(AgentSummary)
  .check(z.describe("The caller's whole tenant in one array, in the store's sort-key order (agent_id ascending by Unicode code point)."));
export type AgentInventory = z.infer<typeof AgentInventory>;

export const MetricKey = z.enum(['cpu', 'memory', 'disk']);
export type MetricKey = z.infer<typeof MetricKey>;

export const FindingScope = z.enum(['connectivity', 'observation', 'metric']);
export type FindingScope = z.infer<typeof FindingScope>;

const Percent = z.number().check(z.minimum(0), z.maximum(100));

export const DashboardEndpoint = z.strictObject({
  id: z.string(),
  hostname: z.string(),
  os: z.string(),
  client_name: z.nullable(z.string()),
  last_heartbeat: z.nullable(DateTime),
});
export type DashboardEndpoint = z.infer<typeof DashboardEndpoint>;

export const DashboardMetric = z.strictObject({
  key: MetricKey,
  label: z.string(),
  value: z.nullable(Percent).check(z.describe('Percent used, 0 to 100; null when not reported (never 0).')),
  status: Status,
  detail: z.string(),
});
export type DashboardMetric = z.infer<typeof DashboardMetric>;

export const DashboardSample = z.strictObject({
  observed_at: DateTime,
  cpu: z.nullable(Percent),
  memory: z.nullable(Percent),
  disk: z.nullable(Percent),
});
export type DashboardSample = z.infer<typeof DashboardSample>;

export const DashboardFinding = z.strictObject({
  scope: FindingScope,
  label: z.string(),
  detail: z.string(),
  status: Status,
});
export type DashboardFinding = z.infer<typeof DashboardFinding>;

export const DASHBOARD_SCHEMA = 'endpoint-dashboard/v1';

export const EndpointDashboard = z.strictObject({
  schema: z.literal(DASHBOARD_SCHEMA),
  endpoint: DashboardEndpoint,
  evaluated_at: DateTime,
  observed_at: z.nullable(DateTime).check(z.describe('Time of the newest sample in the window, else null.')),
  expires_at: z.nullable(DateTime).check(z.describe('observed_at plus the observation TTL, else null.')),
  window_minutes: z.number().check(z.int(), z.minimum(5), z.maximum(10080)),
  status: Status.check(z.describe('The worst of all metric and finding statuses; ok when nothing is worse.')),
  metrics: z
    .nullable(z.array(DashboardMetric))
    .check(z.describe('Exactly cpu, memory, disk in that order; null only when the endpoint never reported within retention.')),
  history: z
    .nullable(z.array(DashboardSample))
    .check(
      z.describe(
        'Samples in the window, oldest first, downsampled to at most `limit` buckets; [] for an empty window; null exactly when metrics is null.',
      ),
    ),
  findings: z
    .nullable(z.array(DashboardFinding))
    .check(z.describe('One per problem, worst first then by scope; [] when nothing is wrong. Never null in practice.')),
  policy_description: z.string(),
});
export type EndpointDashboard = z.infer<typeof EndpointDashboard>;

/** Query bounds of getEndpointObservations. */
export const OBSERVATION_BOUNDS = Object.freeze({
  agentId: AGENT_ID_LENGTH,
  minutes: { min: 5, max: 10080, default: 60 },
  limit: { min: 1, max: 500, default: 100 },
  reason: { min: 3, max: 500 },
  ticketNumber: { min: 1, max: 100 },
});

export const TICKET_NUMBER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,99}$/;

/** A query parameter of digits, read as a whole number within `min`..`max`, `default` when absent. */
function wholeNumberParameter({ min, max, default: fallback }: { min: number; max: number; default: number }) {
  const number = z.pipe(
    z.pipe(z.string().check(z.regex(/^[0-9]{1,6}$/, 'must be a whole number')), z.transform(Number)),
    z.number().check(z.int(), z.minimum(min), z.maximum(max)),
  );
  return z.pipe(
    z.optional(number),
    z.transform((v: number | undefined) => v ?? fallback),
  );
}

/** The query of getEndpointObservations, as the handler accepts it (after duplicate checks). */
export const ObservationsQuery = z.strictObject({
  agent_id: AgentId,
  minutes: wholeNumberParameter(OBSERVATION_BOUNDS.minutes),
  limit: wholeNumberParameter(OBSERVATION_BOUNDS.limit),
});
export type ObservationsQuery = z.output<typeof ObservationsQuery>;
