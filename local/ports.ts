import { type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sentenceOf } from './failure.js';
import { foreignHostRefusal } from './guard.js';
import { readBoundedBody } from './listener-io.js';

/**
 * The ports of the local stack: each is bound and, when some are taken, every one of them is
 * named in one sentence with who holds it, so that a user frees them all at once. A port held by
 * this project's own stack (another `npm start`) is told apart by a request that names another
 * host: only this stack's guard (local/guard.ts) refuses it with its own sentence.
 */

/** One port of the stack, and the variable that moves it. */
export interface StackPort {
  port: number;
  variable: 'PORT' | 'PRIVATE_PORT' | 'DYNAMODB_PORT';
  role: string;
  kind: 'gateway' | 'engine';
}

/** Binds a server; the error code when the port cannot be had. */
export function bind(server: Server, port: number, host: string): Promise<number | NodeJS.ErrnoException> {
  return new Promise((resolve) => {
    const failed = (error: NodeJS.ErrnoException): void => resolve(error);
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

type Holder = 'stack' | 'engine' | 'other';

const PROBE_TIMEOUT_MS = 1_000;

/** Far more than the guard's refusal (one sentence and a request id): a longer answer is another program's. */
const PROBE_MAX_BYTES = 16 * 1024;

/**
 * The answer of whatever listens on `port` to a request naming another host (fetch cannot set `Host`).
 * Settles within PROBE_TIMEOUT_MS whatever the holder does: a socket timeout fires only when the
 * socket is idle, so a server that trickles or streams without end is cut by the overall signal,
 * and the bounded reader stops a long answer with an error instead of a silent destroy.
 */
async function foreignHostAnswer(port: number): Promise<{ status: number; body: string }> {
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/', headers: { Host: 'endpoint-read-service-port-probe.invalid' }, signal },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
  try {
    return { status: res.statusCode ?? 0, body: (await readBoundedBody(res, PROBE_MAX_BYTES)).toString('utf8') };
  } finally {
    // Past the bound the connection still streams: close it rather than leave it to the holder.
    res.destroy();
  }
}

async function holderOf(taken: StackPort): Promise<Holder> {
  const base = `http://127.0.0.1:${taken.port}`;
  try {
    if (taken.kind === 'engine') {
      const response = await fetch(base, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.ListTables' },
        body: '{}',
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      return body && ('TableNames' in body || '__type' in body) ? 'engine' : 'other';
    }
    const answer = await foreignHostAnswer(taken.port);
    return answer.status === 403 && sentenceOf(answer.body) === foreignHostRefusal(taken.port) ? 'stack' : 'other';
  } catch {
    return 'other';
  }
}

function list(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

const HOLDERS: Record<Holder, string> = {
  stack: "this project's own local stack (another `npm start` still running)",
  engine: 'a DynamoDB-compatible engine (another `npm start` of this project, or DynamoDB Local)',
  other: 'another program',
};

/**
 * One sentence for every taken port: which ports, which role each plays, who holds them, and the
 * variables that move them. Ports held by the same kind of holder are named together.
 */
export async function portsInUseSentence(taken: readonly StackPort[]): Promise<string> {
  const held = await Promise.all(taken.map(async (port) => ({ port, holder: await holderOf(port) })));
  const groups = new Map<Holder, StackPort[]>();
  for (const { port, holder } of held) groups.set(holder, [...(groups.get(holder) ?? []), port]);
  const clauses = [...groups.entries()].map(([holder, ports], i) => {
    const noun = ports.length === 1 ? 'port' : 'ports';
    const named = list(ports.map((p) => `${p.port} (${p.variable}, ${p.role})`));
    // "ports A and B are in use by X, and port C by Y": the verb once, in the first clause.
    const verb = i > 0 ? 'by' : ports.length === 1 ? 'is in use by' : 'are in use by';
    return `${noun} ${named} ${verb} ${HOLDERS[holder]}`;
  });
  const variables = list(taken.map((p) => p.variable));
  const stop = groups.has('stack')
    ? 'stop that `npm start` (Ctrl-C in its terminal)'
    : groups.size === 1 && taken.length === 1
      ? 'stop it'
      : 'stop them';
  const engine = held.find(({ port, holder }) => port.kind === 'engine' && holder === 'engine')?.port;
  const reuse = engine ? `, or use that engine with DYNAMODB_ENDPOINT=http://127.0.0.1:${engine.port}` : '';
  return `${clauses.join(', and ')}; ${stop}, or set ${variables} to ${taken.length === 1 ? 'a free port' : 'free ports'}${reuse}.`;
}
