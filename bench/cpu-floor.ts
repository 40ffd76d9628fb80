import { once } from 'node:events';
import type { Transform } from 'node:stream';
import type { BrotliCompress } from 'node:zlib';
import { constants as zlib } from 'node:zlib';
import { newerTime } from '../lib/inventory/merge.js';
import { type ContentCoding, compressor } from '../lib/json-array-stream.js';
import { queryBody, rawQuery } from './raw-query.js';
import { peakRssBytes, type ThreadCpu, threadCpu } from './thread-cpu.js';

/**
 * The CPU floor: the least work that gives the inventory's answer, done over the whole tenant in a
 * fresh process, as a fresh function instance does it. "The same work" is the answer's three
 * steps and nothing else:
 * - parse: every Query page of the tenant's partition, fetched as raw HTTP (no SDK, no signing),
 *   its bytes decoded and parsed with `JSON.parse`, the next page asked for once a page is parsed
 *   (the service's paginator does the same);
 * - serialize: each agent's answer element, one object per agent made from its one or two records
 *   (adjacent items of the same `agent_id`) and passed to `JSON.stringify`, the same fields in the
 *   same order as the service's summary (floorSummary), with no check of any record;
 * - compress: the array's text through the service's own compressor (lib/json-array-stream.ts
 *   `compressor`: gzip level 6, or brotli quality 4 flushed after each page), on libuv's pool as
 *   the service's stream does.
 * What the service does beyond it, the floor does not: the SDK (its HTTP client, signing, its
 * schema-driven deserializer), the checks of every record, the stream machinery, the Lambda
 * runtime and the bundle's import. It runs with the inventory function's Node and heap flags
 * (bench/inventory.ts starts it), so it collects its garbage under the same bounds.
 */

/** An item's attribute value as a string, or undefined (absent, NULL, or not a string). */
const text = (item: Record<string, { S?: string } | undefined>, name: string): string | undefined => item[name]?.S;

/**
 * One agent's answer element from its records as stored (attribute values), with no check: the
 * service's summary (lib/inventory/merge.ts summarizeAgent) for records that are readable, field
 * for field. `heartbeatEdge` is the oldest heartbeat still within the grace, in the store's
 * fixed-width form.
 */
function floorSummary(
  durable: Record<string, { S?: string } | undefined> | undefined,
  connection: Record<string, { S?: string } | undefined> | undefined,
  heartbeatEdge: string,
): Record<string, string | boolean> {
  const base = durable ?? connection ?? {};
  const a = durable ? text(durable, 'last_heartbeat') : undefined;
  const b = connection ? text(connection, 'last_heartbeat') : undefined;
  const heartbeat = newerTime(a, b);
  const state = !connection
    ? 'never_connected'
    : text(connection, 'state') === 'disconnected'
      ? 'disconnected'
      : heartbeat !== undefined && heartbeat >= heartbeatEdge
        ? 'connected'
        : 'stale';
  const out: Record<string, string | boolean> = {
    agent_id: text(base, 'agent_id') ?? '',
    hostname: text(base, 'hostname') ?? '',
    os: text(base, 'os') ?? '',
    arch: text(base, 'arch') ?? '',
    version: text(base, 'version') ?? '',
    is_online: state === 'connected',
    connection_state: state,
  };
  const set = (name: string, value: string | undefined): void => {
    if (value) out[name] = value;
  };
  set('client_id', durable && text(durable, 'client_id'));
  set('connected_at', connection && text(connection, 'connected_at'));
  set('disconnected_at', connection && text(connection, 'disconnected_at'));
  set('enrolled_at', durable && text(durable, 'enrolled_at'));
  set('last_heartbeat', heartbeat);
  set('update_ring', durable && text(durable, 'update_ring'));
  return out;
}

type Item = Record<string, { S?: string } | undefined>;
interface Held {
  id: string | undefined;
  durable?: Item | undefined;
  connection?: Item | undefined;
}

/**
 * One page's answer elements, serialized: its items paired by `agent_id` (an agent's records are
 * adjacent; one whose records straddle the page boundary is held back for the next page, as the
 * service does), each agent's element passed to JSON.stringify. Returns the texts and the agent held.
 */
function floorPage(items: readonly Item[], held: Held | undefined, heartbeatEdge: string): { parts: string[]; held: Held | undefined } {
  const parts: string[] = [];
  let current = held;
  for (const item of items) {
    const id = text(item, 'agent_id');
    const durable = text(item, 'kind') === 'agent';
    if (current && current.id === id) {
      if (durable) current.durable = item;
      else current.connection = item;
      continue;
    }
    if (current) parts.push(JSON.stringify(floorSummary(current.durable, current.connection, heartbeatEdge)));
    current = durable ? { id, durable: item } : { id, connection: item };
  }
  return { parts, held: current };
}

/** What one floor run measured, in its own process. */
export interface CpuFloorRun {
  agents: number;
  pages: number;
  /** The answer's JSON, in bytes, and what the compressor made of it. */
  jsonBytes: number;
  bytes: number;
  ms: number;
  /** The whole process's CPU (user and system, every thread) from its start, Node's own start included. */
  cpuMs: number;
  threads: ThreadCpu | undefined;
  maxRssMiB: number;
  /** The compressed answer, when asked for (`keep`): the bench only counts it. */
  compressed?: Buffer;
}

/** Parses, serializes and compresses the whole partition `pk`, page by page; resolves once the compressor has ended. */
export async function cpuFloorRun(options: {
  endpoint: string;
  table: string;
  pk: string;
  coding: ContentCoding;
  heartbeatEdge: string;
  keep?: boolean;
  /** Called once the first page is parsed: where the function sets its heap flags (lib/inventory/heap-growth.ts). */
  afterFirstPage?: () => void;
}): Promise<CpuFloorRun> {
  const started = performance.now();
  const compress = compressor(options.coding) as Transform;
  const brotli = options.coding === 'br' ? (compress as BrotliCompress) : undefined;
  let bytes = 0;
  const kept: Buffer[] = [];
  compress.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (options.keep) kept.push(chunk);
  });
  const ended = once(compress, 'end');
  let jsonBytes = 0;
  let agents = 0;
  let pages = 0;
  let separator = '[';
  const write = async (piece: string): Promise<void> => {
    jsonBytes += Buffer.byteLength(piece);
    if (!compress.write(piece)) await once(compress, 'drain');
  };
  let pending: Promise<Buffer> | undefined = rawQuery(options.endpoint, queryBody(options.table, options.pk));
  let held: Held | undefined;
  while (pending !== undefined) {
    const page = JSON.parse((await pending).toString('utf8')) as { Items: Item[]; LastEvaluatedKey?: unknown };
    pages += 1;
    if (pages === 1) options.afterFirstPage?.();
    pending = page.LastEvaluatedKey
      ? rawQuery(options.endpoint, queryBody(options.table, options.pk, JSON.stringify(page.LastEvaluatedKey)))
      : undefined;
    const out = floorPage(page.Items, held, options.heartbeatEdge);
    held = out.held;
    if (out.parts.length === 0) continue;
    agents += out.parts.length;
    await write(separator + out.parts.join(','));
    separator = ',';
    brotli?.flush(zlib.BROTLI_OPERATION_FLUSH);
  }
  if (held) {
    agents += 1;
    await write(separator + JSON.stringify(floorSummary(held.durable, held.connection, options.heartbeatEdge)));
    separator = ',';
  }
  jsonBytes += separator === '[' ? 2 : 1;
  compress.end(separator === '[' ? '[]' : ']');
  await ended;
  const cpu = process.cpuUsage();
  return {
    agents,
    pages,
    jsonBytes,
    bytes,
    ms: performance.now() - started,
    cpuMs: (cpu.user + cpu.system) / 1000,
    threads: threadCpu(),
    maxRssMiB: (peakRssBytes() ?? 0) / 1_048_576,
    ...(options.keep ? { compressed: Buffer.concat(kept) } : {}),
  };
}
