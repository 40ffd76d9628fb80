import { z } from 'zod';

/**
 * The records as the store holds them, parsed from DynamoDB items. Parsing keeps only the declared
 * attributes (keys and bookkeeping never leave the store) and reads a stored `null` as absent.
 */

const text = z.string().min(1);
const optionalText = z
  .string()
  .nullish()
  .transform((v) => (v === null || v === undefined || v === '' ? undefined : v));
/** A stored timestamp, normalised to UTC ISO; an unreadable one is an issue, never a throw. */
const time = z.string().transform((v, ctx) => {
  const t = Date.parse(v);
  if (Number.isNaN(t)) {
    ctx.addIssue({ code: 'custom', message: 'not a timestamp' });
    return z.NEVER;
  }
  return new Date(t).toISOString();
});
const optionalTime = z
  .string()
  .nullish()
  .transform((v) => (v === null || v === undefined || v === '' ? undefined : v))
  .pipe(time.optional());

/** The fields every agent record carries: its id and the hello fields (hostname, os, arch, version). */
const AgentHello = z.object({
  agent_id: text,
  hostname: text,
  os: text,
  arch: text,
  version: text,
});

/** Written by enrollment and the heartbeat pipeline. */
export const DurableRecord = AgentHello.extend({
  client_id: optionalText,
  client_name: optionalText,
  enrolled_at: optionalTime,
  update_ring: optionalText,
  last_heartbeat: optionalTime,
});
export type DurableRecord = z.output<typeof DurableRecord>;

/** Written by the connection broker, with the agent's own hello fields and heartbeat. */
export const ConnectionRecord = AgentHello.extend({
  state: z.enum(['connected', 'disconnected']),
  connected_at: optionalTime,
  disconnected_at: optionalTime,
  last_heartbeat: optionalTime,
});
export type ConnectionRecord = z.output<typeof ConnectionRecord>;

/** One observation; each metric is percent used or null when the agent did not report it. */
export const SampleRecord = z.object({
  observed_at: time,
  cpu: z.number().nullish().transform((v) => v ?? null),
  memory: z.number().nullish().transform((v) => v ?? null),
  disk: z.number().nullish().transform((v) => v ?? null),
});
export type SampleRecord = z.output<typeof SampleRecord>;

export const Thresholds = z.strictObject({
  warning: z.number().min(0).max(100),
  critical: z.number().min(0).max(100),
}).refine((t) => t.warning <= t.critical, 'warning must not exceed critical');
export type Thresholds = z.output<typeof Thresholds>;

export const TenantPolicy = z.object({
  ticket: z.enum(['optional', 'required']).default('optional'),
  thresholds: z
    .strictObject({ cpu: Thresholds.optional(), memory: Thresholds.optional(), disk: Thresholds.optional() })
    .default({}),
});
export type TenantPolicy = z.output<typeof TenantPolicy>;

export const RECORD_KIND = { durable: 'agent', connection: 'connection', sample: 'sample', policy: 'policy' } as const;
