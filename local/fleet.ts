import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import {
  ALL_GROUPS,
  connectionRecordItem,
  durableRecordItem,
  isAgentId,
  isGroupName,
  MAX_AGENT_ID_CHARACTERS,
  MAX_GROUP_NAME_CHARACTERS,
  policyItem,
  sampleItem,
  TenantPolicy,
} from '../lib/data-format/index.js';
import { batchWriteItems } from './batch-write.js';

/** The fleet file of DESIGN §7: tenants, their optional policy, agents, their records and samples. */
const time = z.iso.datetime({ offset: true });
const optionalString = z.string().nullish();
const metric = z.number().min(0).max(100).nullish();
const agentId = z.string().refine(isAgentId, `must be 1 to ${MAX_AGENT_ID_CHARACTERS} characters`);
/** An endpoint group: what a token's scope claim names. */
const groupName = z
  .string()
  .refine(isGroupName, `a group name is 1 to ${MAX_GROUP_NAME_CHARACTERS} characters`)
  .refine((g) => g !== ALL_GROUPS, `"${ALL_GROUPS}" is not a group name (in a token it means every group)`);
const groups = z
  .array(groupName)
  .refine((g) => new Set(g).size === g.length, 'a group appears twice in one agent')
  .nullish();

export const FleetAgent = z
  .strictObject({
    agent_id: agentId,
    hostname: z.string().min(1),
    os: z.string().min(1),
    arch: z.string().min(1),
    version: z.string().min(1),
    durable: z.boolean().default(true),
    client_id: optionalString,
    client_name: optionalString,
    enrolled_at: time.nullish(),
    update_ring: optionalString,
    last_heartbeat: time.nullish(),
    /** The endpoint groups it belongs to, kept on its durable record. */
    groups,
    connection: z
      .strictObject({
        state: z.enum(['connected', 'disconnected']),
        connected_at: time.nullish(),
        disconnected_at: time.nullish(),
        last_heartbeat: time.nullish(),
      })
      .nullish(),
    samples: z.array(z.strictObject({ observed_at: time, cpu: metric, memory: metric, disk: metric })).default([]),
  })
  .refine((a) => a.durable || a.connection, { message: 'an agent with durable: false must have a connection' })
  .refine((a) => a.durable || !a.groups || a.groups.length === 0, {
    message: 'groups are kept on the durable record: an agent with durable: false has none',
    path: ['groups'],
  });
export type FleetAgent = z.input<typeof FleetAgent>;
type ParsedAgent = z.output<typeof FleetAgent>;

export const Fleet = z.strictObject({
  tenants: z.array(
    z
      .strictObject({
        tenant_id: z.string().min(1),
        policy: z.nullish(TenantPolicy),
        agents: z.array(FleetAgent).default([]),
      })
      .refine((t) => new Set(t.agents.map((a) => a.agent_id)).size === t.agents.length, {
        message: 'an agent_id appears twice in one tenant',
      }),
  ),
});
export type Fleet = z.input<typeof Fleet>;

const opt = (v: string | null | undefined): string | undefined => (v === null || v === undefined ? undefined : v);

/** The items of one agent: its durable record, its connection record and its samples, as the service stores them. */
function* agentItems(tenantId: string, a: ParsedAgent, retentionDays: number): Generator<Record<string, unknown>> {
  if (a.durable) {
    yield durableRecordItem(tenantId, {
      agent_id: a.agent_id,
      hostname: a.hostname,
      os: a.os,
      arch: a.arch,
      version: a.version,
      client_id: opt(a.client_id),
      client_name: opt(a.client_name),
      enrolled_at: opt(a.enrolled_at),
      update_ring: opt(a.update_ring),
      last_heartbeat: opt(a.last_heartbeat),
      groups: a.groups ?? undefined,
    });
  }
  if (a.connection) {
    yield connectionRecordItem(tenantId, {
      agent_id: a.agent_id,
      hostname: a.hostname,
      os: a.os,
      arch: a.arch,
      version: a.version,
      state: a.connection.state,
      connected_at: opt(a.connection.connected_at),
      disconnected_at: opt(a.connection.disconnected_at),
      last_heartbeat: opt(a.connection.last_heartbeat ?? a.last_heartbeat),
    });
  }
  for (const s of a.samples) {
    yield sampleItem(
      tenantId,
      a.agent_id,
      { observed_at: s.observed_at, cpu: s.cpu ?? null, memory: s.memory ?? null, disk: s.disk ?? null },
      retentionDays,
    );
  }
}

export interface WriteOptions {
  /** BatchWriteItem requests in flight (default 8). */
  concurrency?: number;
  /** Called after each batch with the items written so far. */
  onProgress?: (itemsWritten: number) => void;
}

/**
 * Writes one tenant's agents (fleet-file agents, each validated as it is taken, so a generated
 * tenant of any size streams through) in BatchWriteItems of 25, several in flight, retrying
 * unprocessed items with backoff. Every item has a fixed key, so writing twice is idempotent.
 */
export async function writeTenantAgents(
  db: DynamoDBDocumentClient,
  tables: { dataTable: string },
  tenantId: string,
  agents: Iterable<unknown>,
  retentionDays: number,
  options: WriteOptions = {},
): Promise<{ agents: number; samples: number; items: number }> {
  function* parsed(): Generator<ParsedAgent> {
    for (const input of agents) yield FleetAgent.parse(input);
  }
  return writeParsedAgents(db, tables, tenantId, parsed(), retentionDays, options);
}

/** writeTenantAgents for agents already validated (a parsed fleet): each is read once. */
async function writeParsedAgents(
  db: DynamoDBDocumentClient,
  tables: { dataTable: string },
  tenantId: string,
  agents: Iterable<ParsedAgent>,
  retentionDays: number,
  options: WriteOptions,
): Promise<{ agents: number; samples: number; items: number }> {
  let agentCount = 0;
  let sampleCount = 0;
  function* items(): Generator<Record<string, unknown>> {
    for (const agent of agents) {
      agentCount += 1;
      sampleCount += agent.samples.length;
      yield* agentItems(tenantId, agent, retentionDays);
    }
  }
  let written = 0;
  await batchWriteItems(db, tables.dataTable, items(), {
    concurrency: options.concurrency ?? 8,
    onWritten: (count) => {
      written += count;
      options.onProgress?.(written);
    },
  });
  return { agents: agentCount, samples: sampleCount, items: written };
}

/** Items a parsed fleet writes (for progress lines). */
export function fleetItemCount(fleet: ParsedFleet): number {
  let items = 0;
  for (const t of fleet.tenants) {
    for (const a of t.agents) items += (a.durable ? 1 : 0) + (a.connection ? 1 : 0) + a.samples.length;
  }
  return items;
}

/** A fleet as validation gives it (defaults applied), ready for writeFleet. */
export type ParsedFleet = z.output<typeof Fleet>;

/** Validates a fleet and writes it to the data table (writeFleet). */
export async function loadFleet(
  db: DynamoDBDocumentClient,
  tables: { dataTable: string },
  input: unknown,
  retentionDays: number,
  options: WriteOptions = {},
): Promise<{ tenants: number; agents: number; samples: number }> {
  return writeFleet(db, tables, Fleet.parse(input), retentionDays, options);
}

/**
 * Writes a validated fleet to the data table, without validating it again. Every write is a put
 * of a fixed key, so writing twice is idempotent.
 */
export async function writeFleet(
  db: DynamoDBDocumentClient,
  tables: { dataTable: string },
  fleet: ParsedFleet,
  retentionDays: number,
  options: WriteOptions = {},
): Promise<{ tenants: number; agents: number; samples: number }> {
  let agents = 0;
  let samples = 0;
  let before = 0;
  for (const tenant of fleet.tenants) {
    if (tenant.policy) await batchWriteItems(db, tables.dataTable, [policyItem(tenant.tenant_id, tenant.policy)]);
    const written = await writeParsedAgents(db, tables, tenant.tenant_id, tenant.agents, retentionDays, {
      ...options,
      onProgress: (n) => options.onProgress?.(before + n),
    });
    before += written.items;
    agents += written.agents;
    samples += written.samples;
  }
  return { tenants: fleet.tenants.length, agents, samples };
}
