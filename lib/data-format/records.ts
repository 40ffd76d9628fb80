import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import * as z from 'zod/mini';
import './zod-english-locale.js';

/**
 * The records as the store holds them, read from DynamoDB items in their wire form (attribute
 * values such as `{ S: "…" }`). Reading keeps only the declared attributes (keys and bookkeeping
 * never leave the store), reads a stored `null` or `""` as absent, and normalises every time to
 * the fixed-width UTC form `YYYY-MM-DDTHH:MM:SS.sssZ`, so times compare as strings.
 *
 * The readers are hand-written rather than zod schemas: they run once per stored record (200,000
 * times for a 100,000-endpoint tenant) and must cost little more than reading the attributes.
 * A record that cannot be read gives `undefined`, never a throw; callers count it.
 */

/** One DynamoDB item as the low-level client returns it. */
export type RawItem = Record<string, AttributeValue>;

/** The fields every agent record carries: its id and the hello fields (hostname, os, arch, version). */
export interface AgentHello {
  agent_id: string;
  hostname: string;
  os: string;
  arch: string;
  version: string;
}

/** Written by enrollment and the heartbeat pipeline. */
export interface DurableRecord extends AgentHello {
  client_id?: string | undefined;
  client_name?: string | undefined;
  enrolled_at?: string | undefined;
  update_ring?: string | undefined;
  last_heartbeat?: string | undefined;
  /**
   * The endpoint groups the agent belongs to (the endpoint scope, lib/auth/endpoint-scope.ts);
   * undefined when it belongs to none. Never part of an AgentSummary.
   */
  groups?: readonly string[] | undefined;
}

/** Written by the connection broker, with the agent's own hello fields and heartbeat. */
export interface ConnectionRecord extends AgentHello {
  state: 'connected' | 'disconnected';
  connected_at?: string | undefined;
  disconnected_at?: string | undefined;
  last_heartbeat?: string | undefined;
}

/** One observation; each metric is percent used or null when the agent did not report it. */
export interface SampleRecord {
  observed_at: string;
  cpu: number | null;
  memory: number | null;
  disk: number | null;
}

export const RECORD_KIND = { durable: 'agent', connection: 'connection', sample: 'sample', policy: 'policy' } as const;

/** The contract's bound on `agent_id`, in characters (code points) as JSON Schema counts them. */
export const MAX_AGENT_ID_CHARACTERS = 128;

/** Marks a value that is present but cannot be read (distinct from an absent one). */
const BAD = Symbol('unreadable');
type Bad = typeof BAD;

const CANONICAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function twoDigits(v: string, at: number): number {
  return (v.charCodeAt(at) - 48) * 10 + (v.charCodeAt(at + 1) - 48);
}

/** True for a real instant written exactly as `Date.prototype.toISOString` writes years 0000-9999. */
function isCanonicalTime(v: string): boolean {
  if (v.length !== 24 || !CANONICAL_TIME.test(v)) return false;
  const year = twoDigits(v, 0) * 100 + twoDigits(v, 2);
  const month = twoDigits(v, 5);
  const day = twoDigits(v, 8);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 31);
  return day <= days && twoDigits(v, 11) <= 23 && twoDigits(v, 14) <= 59 && twoDigits(v, 17) <= 59;
}

/**
 * A stored timestamp as a canonical UTC string, or BAD. The canonical form is checked field by
 * field without allocating (the common case); any other form is read with `Date.parse` and
 * rewritten, and is BAD when it is no date or falls outside years 0000-9999.
 */
export function normaliseTime(v: string): string | Bad {
  if (isCanonicalTime(v)) return v;
  if (v.length === 24 && CANONICAL_TIME.test(v)) return BAD; // canonical shape, impossible date
  const t = Date.parse(v);
  if (Number.isNaN(t)) return BAD;
  const iso = new Date(t).toISOString();
  return iso.length === 24 ? iso : BAD;
}

/** Code points of a string, counting a surrogate pair once (as JSON Schema's maxLength does). */
function characterCount(v: string): number {
  let count = v.length;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < v.length) {
      const next = v.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count -= 1;
        i += 1;
      }
    }
  }
  return count;
}

/** An `agent_id` a producer may write: 1 to MAX_AGENT_ID_CHARACTERS characters, counted as code points. */
export function isAgentId(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && characterCount(value) <= MAX_AGENT_ID_CHARACTERS;
}

/** A required non-empty string attribute, or BAD. */
function text(av: AttributeValue | undefined): string | Bad {
  const s = (av as { S?: unknown } | undefined)?.S;
  return typeof s === 'string' && s !== '' ? s : BAD;
}

/** An optional string attribute: absent, `NULL` or `""` is undefined; another type is BAD. */
function optionalText(av: AttributeValue | undefined): string | undefined | Bad {
  if (av === undefined || (av as { NULL?: unknown }).NULL === true) return undefined;
  const s = (av as { S?: unknown }).S;
  if (typeof s !== 'string') return BAD;
  return s === '' ? undefined : s;
}

/**
 * An optional set of group names: a string set (`SS`, as the service writes it) or a list of
 * strings (`L`, as some writers put a JSON array); absent, `NULL` or empty is undefined; another
 * type, or a list with a member that is not a string, is BAD. Empty names match no scope and are
 * dropped.
 */
function optionalGroups(av: AttributeValue | undefined): readonly string[] | undefined | Bad {
  if (av === undefined || (av as { NULL?: unknown }).NULL === true) return undefined;
  const set = (av as { SS?: unknown }).SS;
  const list = (av as { L?: unknown }).L;
  let names: string[];
  if (Array.isArray(set)) {
    for (const name of set) if (typeof name !== 'string') return BAD;
    names = set as string[];
  } else if (Array.isArray(list)) {
    names = [];
    for (const member of list) {
      const name = (member as { S?: unknown } | null)?.S;
      if (typeof name !== 'string') return BAD;
      names.push(name);
    }
  } else {
    return BAD;
  }
  if (names.includes('')) names = names.filter((name) => name !== '');
  return names.length === 0 ? undefined : names;
}

function optionalTime(av: AttributeValue | undefined): string | undefined | Bad {
  const s = optionalText(av);
  return s === undefined || s === BAD ? s : normaliseTime(s);
}

/** A metric: a number, or null when absent or `NULL`; another type is BAD. */
function metric(av: AttributeValue | undefined): number | null | Bad {
  if (av === undefined || (av as { NULL?: unknown }).NULL === true) return null;
  const n = (av as { N?: unknown }).N;
  if (typeof n !== 'string') return BAD;
  const value = Number(n);
  return Number.isFinite(value) ? value : BAD;
}

/** The hello fields, with an `agent_id` within the contract's 128 characters, or undefined. */
function readHello(item: RawItem): AgentHello | undefined {
  const agentId = text(item.agent_id);
  const hostname = text(item.hostname);
  const os = text(item.os);
  const arch = text(item.arch);
  const version = text(item.version);
  if (agentId === BAD || hostname === BAD || os === BAD || arch === BAD || version === BAD) return undefined;
  if (agentId.length > MAX_AGENT_ID_CHARACTERS && characterCount(agentId) > MAX_AGENT_ID_CHARACTERS) return undefined;
  return { agent_id: agentId, hostname, os, arch, version };
}

/**
 * A durable record, or undefined when it cannot be read: a hello field missing or empty, an
 * `agent_id` over 128 characters (it would break the contract), or an optional field of the
 * wrong type (`groups` included: it decides who may see the agent, so it is never guessed at) or
 * an unreadable time.
 */
export function readDurableRecord(item: RawItem): DurableRecord | undefined {
  const hello = readHello(item);
  if (!hello) return undefined;
  const clientId = optionalText(item.client_id);
  const clientName = optionalText(item.client_name);
  const enrolledAt = optionalTime(item.enrolled_at);
  const updateRing = optionalText(item.update_ring);
  const lastHeartbeat = optionalTime(item.last_heartbeat);
  const groups = optionalGroups(item.groups);
  if (clientId === BAD || clientName === BAD || enrolledAt === BAD || updateRing === BAD || lastHeartbeat === BAD || groups === BAD)
    return undefined;
  // Built property by property: object spread costs microseconds per record in V8, and this runs per stored record.
  return {
    agent_id: hello.agent_id,
    hostname: hello.hostname,
    os: hello.os,
    arch: hello.arch,
    version: hello.version,
    client_id: clientId,
    client_name: clientName,
    enrolled_at: enrolledAt,
    update_ring: updateRing,
    last_heartbeat: lastHeartbeat,
    groups,
  };
}

/** A connection record, or undefined when it cannot be read (as for durable records, and a state other than connected or disconnected). */
export function readConnectionRecord(item: RawItem): ConnectionRecord | undefined {
  const hello = readHello(item);
  if (!hello) return undefined;
  const state = (item.state as { S?: unknown } | undefined)?.S;
  if (state !== 'connected' && state !== 'disconnected') return undefined;
  const connectedAt = optionalTime(item.connected_at);
  const disconnectedAt = optionalTime(item.disconnected_at);
  const lastHeartbeat = optionalTime(item.last_heartbeat);
  if (connectedAt === BAD || disconnectedAt === BAD || lastHeartbeat === BAD) return undefined;
  return {
    agent_id: hello.agent_id,
    hostname: hello.hostname,
    os: hello.os,
    arch: hello.arch,
    version: hello.version,
    state,
    connected_at: connectedAt,
    disconnected_at: disconnectedAt,
    last_heartbeat: lastHeartbeat,
  };
}

/** A sample, or undefined when its time is missing or unreadable or a metric is not a number. */
export function readSampleRecord(item: RawItem): SampleRecord | undefined {
  const at = text(item.observed_at);
  if (at === BAD) return undefined;
  const observedAt = normaliseTime(at);
  const cpu = metric(item.cpu);
  const memory = metric(item.memory);
  const disk = metric(item.disk);
  if (observedAt === BAD || cpu === BAD || memory === BAD || disk === BAD) return undefined;
  return { observed_at: observedAt, cpu, memory, disk };
}

export const Thresholds = z
  .strictObject({
    warning: z.number().check(z.minimum(0), z.maximum(100)),
    critical: z.number().check(z.minimum(0), z.maximum(100)),
  })
  .check(z.refine((t) => t.warning <= t.critical, 'warning must not exceed critical'));
export type Thresholds = z.output<typeof Thresholds>;

export const TenantPolicy = z.object({
  ticket: z._default(z.enum(['optional', 'required']), 'optional'),
  /** `required`: a token without the endpoint scope claim is refused (403) at every door. */
  scope: z._default(z.enum(['optional', 'required']), 'optional'),
  thresholds: z._default(z.strictObject({ cpu: z.optional(Thresholds), memory: z.optional(Thresholds), disk: z.optional(Thresholds) }), {}),
});
export type TenantPolicy = z.output<typeof TenantPolicy>;
