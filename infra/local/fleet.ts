import { z } from 'zod';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putConnectionRecord, putDurableRecord } from '../../lib/store/agents.js';
import { putTenantPolicy } from '../../lib/store/policy.js';
import { AgentId } from '../../lib/contract/schemas.js';
import { TenantPolicy } from '../../lib/store/records.js';
import { putSamples } from '../../lib/store/samples.js';

/** The fleet file of DESIGN §7: tenants, their optional policy, agents, their records and samples. */
const time = z.iso.datetime({ offset: true });
const optionalString = z.string().nullish();
const metric = z.number().min(0).max(100).nullish();

export const FleetAgent = z
  .strictObject({
    agent_id: AgentId,
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
    connection: z
      .strictObject({
        state: z.enum(['connected', 'disconnected']),
        connected_at: time.nullish(),
        disconnected_at: time.nullish(),
        last_heartbeat: time.nullish(),
      })
      .nullish(),
    samples: z
      .array(z.strictObject({ observed_at: time, cpu: metric, memory: metric, disk: metric }))
      .default([]),
  })
  .refine((a) => a.durable || a.connection, { message: 'an agent with durable: false must have a connection' });
export type FleetAgent = z.input<typeof FleetAgent>;

export const Fleet = z.strictObject({
  tenants: z.array(
    z.strictObject({
      tenant_id: z.string().min(1),
      policy: TenantPolicy.nullish(),
      agents: z.array(FleetAgent).default([]),
    }),
  ),
});
export type Fleet = z.input<typeof Fleet>;

/** Runs `fn` over `items` with at most `limit` in flight: fast, and gentle on a local engine. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const opt = (v: string | null | undefined): string | undefined => (v === null || v === undefined ? undefined : v);

/** Writes a fleet to the data table. Every write is a put of a fixed key, so loading twice is idempotent. */
export async function loadFleet(
  db: DynamoDBDocumentClient,
  tables: { dataTable: string },
  input: unknown,
  retentionDays: number,
): Promise<{ tenants: number; agents: number; samples: number }> {
  const fleet = Fleet.parse(input);
  let agents = 0;
  let samples = 0;
  for (const tenant of fleet.tenants) {
    if (tenant.policy) await putTenantPolicy(db, tables.dataTable, tenant.tenant_id, tenant.policy);
    await eachLimited(tenant.agents, 8, async (a) => {
      const hello = { agent_id: a.agent_id, hostname: a.hostname, os: a.os, arch: a.arch, version: a.version };
      if (a.durable) {
        await putDurableRecord(db, tables.dataTable, tenant.tenant_id, {
          ...hello,
          client_id: opt(a.client_id),
          client_name: opt(a.client_name),
          enrolled_at: opt(a.enrolled_at),
          update_ring: opt(a.update_ring),
          last_heartbeat: opt(a.last_heartbeat),
        });
      }
      if (a.connection) {
        await putConnectionRecord(db, tables.dataTable, tenant.tenant_id, {
          ...hello,
          state: a.connection.state,
          connected_at: opt(a.connection.connected_at),
          disconnected_at: opt(a.connection.disconnected_at),
          last_heartbeat: opt(a.connection.last_heartbeat ?? a.last_heartbeat),
        });
      }
      if (a.samples.length > 0) {
        const rows = a.samples.map((s) => ({
          observed_at: s.observed_at,
          cpu: s.cpu ?? null,
          memory: s.memory ?? null,
          disk: s.disk ?? null,
        }));
        await putSamples(db, tables.dataTable, tenant.tenant_id, a.agent_id, rows, retentionDays);
      }
      agents += 1;
      samples += a.samples.length;
    });
  }
  return { tenants: fleet.tenants.length, agents, samples };
}
