import { randomBytes } from 'node:crypto';

/**
 * X-Ray's trace header (`X-Amzn-Trace-Id: Root=1-<epoch hex>-<96 bits>;Parent=<64 bits>;Sampled=0|1`),
 * as the local stack passes it on where AWS does: API Gateway with tracing on continues the trace a
 * request's header names (the same root, its own segment as the parent) or starts one, puts the
 * header in the proxy event and hands it to Lambda, whose Runtime API gives it to the runtime as
 * `Lambda-Runtime-Trace-Id` (the runtime client sets `_X_AMZN_TRACE_ID` from it); a function with
 * active tracing invoked without one gets a trace of its own, here not sampled (on AWS, Lambda's
 * sampling rule decides).
 */

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** A new trace root, as X-Ray makes them: `1-`, the epoch seconds in 8 hex digits, 24 random hex digits. */
function newRoot(): string {
  return `1-${Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, '0')}-${hex(12)}`;
}

/** The fields of a trace header (`Root`, `Parent`, `Sampled`…); an unreadable one has none. */
function fieldsOf(header: string | undefined): Map<string, string> {
  const fields = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key && value.length > 0) fields.set(key, value.join('='));
  }
  return fields;
}

/** A trace root as X-Ray writes them; anything else is no trace to continue. */
const ROOT = /^1-[0-9a-f]{8}-[0-9a-f]{24}$/;

/**
 * The header API Gateway (tracing on) passes on for a request that came with `incoming`: its root
 * and sampling decision kept, a new parent (the gateway's segment); a new sampled root when the
 * request named no valid trace.
 */
export function continueTrace(incoming: string | undefined): string {
  const fields = fieldsOf(incoming);
  const root = fields.get('Root');
  if (root === undefined || !ROOT.test(root)) return `Root=${newRoot()};Parent=${hex(8)};Sampled=1`;
  return `Root=${root};Parent=${hex(8)};Sampled=${fields.get('Sampled') === '0' ? '0' : '1'}`;
}

/** The header an invocation that came with none (a direct Invoke) gets: a root of its own, not sampled (on AWS, as Lambda's sampling rule decides). */
export function invocationTrace(): string {
  return `Root=${newRoot()};Parent=${hex(8)};Sampled=0`;
}

/** The trace root of a header (what Powertools Logger writes as `xray_trace_id`), if it names one. */
export function traceRootOf(header: string | undefined): string | undefined {
  const root = fieldsOf(header).get('Root');
  return root !== undefined && ROOT.test(root) ? root : undefined;
}
