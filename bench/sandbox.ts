import { randomUUID } from 'node:crypto';
import { PRELUDE_CONTENT_TYPE, PRELUDE_DELIMITER_BYTES } from '../local/lambda/awslambda.js';
import type { LambdaFunctionSpec } from '../local/lambda/function-specs.js';
import type { LambdaRuntime } from '../local/lambda/runtimes.js';
import { FunctionPool, type InvocationOutcome } from '../local/lambda/sandbox.js';
import { type ThreadCpu, threadCpu } from './thread-cpu.js';

/**
 * The bench's handler figures run the bundles as the local stack runs them: each in the sandbox of
 * local/lambda/ (a process of its own, the runtime client, the Runtime API), invoked with an
 * event and timed from the invocation to the end of its answer. A warm figure reuses the stack's
 * instances; a fresh one starts an instance of its own for one event (a cold start), and reads its
 * peak resident memory and CPU from /proc.
 */

/** What one invocation answered, and when. */
export interface Answered {
  status: number;
  /** The body's bytes (a streamed answer's after its prelude), counted as they came. */
  bytes: number;
  /** A buffered answer's body (a streamed one is counted, not kept, unless asked). */
  body?: string;
  /** A streamed answer's body, when asked for (`keep`). */
  kept?: Buffer;
  /** From the invocation to the first body byte (a streamed answer), or to the whole answer. */
  firstByteMs: number;
  /** From the invocation to the end of the answer. */
  ms: number;
  /** The error a streamed answer failed with after its prelude (its error trailers), if any. */
  failedWith?: string;
}

/** Reads an invocation's answer as API Gateway would: a buffered proxy result, or a streamed prelude and body. */
export async function answerOf(outcome: InvocationOutcome, started: number, keep = false): Promise<Answered> {
  if (outcome.type === 'throttled') throw new Error('the invocation was throttled');
  if (outcome.type === 'failed') throw new Error(`the function failed: ${outcome.error.errorType}: ${outcome.error.errorMessage}`);
  if (outcome.type === 'buffered') {
    const ms = performance.now() - started;
    const result = JSON.parse(outcome.payload.toString('utf8')) as { statusCode?: number; body?: string };
    return {
      status: result.statusCode ?? 0,
      bytes: outcome.payload.length,
      ...(result.body === undefined ? {} : { body: result.body }),
      firstByteMs: ms,
      ms,
    };
  }
  let prelude: Buffer | undefined = outcome.contentType === PRELUDE_CONTENT_TYPE ? Buffer.alloc(0) : undefined;
  let status = 200;
  let bytes = 0;
  let firstByteMs: number | undefined;
  const chunks: Buffer[] = [];
  const take = (chunk: Buffer): void => {
    if (chunk.length === 0) return;
    firstByteMs ??= performance.now() - started;
    bytes += chunk.length;
    if (keep) chunks.push(chunk);
  };
  try {
    for await (const chunk of outcome.body as AsyncIterable<Buffer>) {
      if (prelude === undefined) {
        take(chunk);
        continue;
      }
      prelude = Buffer.concat([prelude, chunk]);
      const end = prelude.indexOf(Buffer.alloc(PRELUDE_DELIMITER_BYTES));
      if (end < 0) continue;
      status = (JSON.parse(prelude.subarray(0, end).toString('utf8')) as { statusCode?: number }).statusCode ?? 200;
      take(prelude.subarray(end + PRELUDE_DELIMITER_BYTES));
      prelude = undefined;
    }
  } catch {
    // The stream was cut (the instance stopped or died mid-answer): `ended` says why, as for the gateway.
  }
  const failed = await outcome.ended;
  const ms = performance.now() - started;
  return {
    status,
    bytes,
    ...(keep ? { kept: Buffer.concat(chunks) } : {}),
    firstByteMs: firstByteMs ?? ms,
    ms,
    ...(failed ? { failedWith: failed.errorType } : {}),
  };
}

/** Invokes one function's sandbox with an event. */
export type Invoker = (event: unknown, requestId: string) => Promise<InvocationOutcome>;

/** A function of the local stack, invoked in its sandboxes (a warm instance when one is free). */
export const stackFunction =
  (
    functions: { invoke(name: LambdaFunctionSpec['name'], event: unknown, requestId: string): Promise<InvocationOutcome> },
    name: LambdaFunctionSpec['name'],
  ): Invoker =>
  (event, requestId) =>
    functions.invoke(name, event, requestId);

/** Invokes with one event and reads the answer (`keep`: a streamed body is kept, not only counted). */
export async function invokeWarm(invoke: Invoker, event: unknown, keep = false): Promise<Answered> {
  const started = performance.now();
  return answerOf(await invoke(event, randomUUID()), started, keep);
}

/** One event in an instance started for it (a cold start): its answer, init time, peak memory and CPU. */
export interface FreshRun extends Answered {
  /** From the invocation (the instance's spawn) to the end of the answer. */
  wallMs: number;
  /** Spawn to the runtime's first request for an event: Node, the runtime client and the bundle's import (Lambda's Init Duration). */
  initMs: number;
  /** The event itself, from the instance's readiness to the end of the answer. */
  invokeMs: number;
  maxRssMiB: number;
  cpuMs: number;
  /** Its CPU by thread kind as its answer completed (bench/thread-cpu.ts); undefined where /proc cannot be read. */
  threads?: ThreadCpu | undefined;
}

/** The sandbox of one function, for fresh instances: its settings, environment and bundle folder, the runtime client. */
export interface FreshSandbox {
  spec: LambdaFunctionSpec;
  environment: Readonly<Record<string, string>>;
  bundleDir: string;
  runtime: LambdaRuntime;
  userEnv: NodeJS.ProcessEnv;
}

function poolOf(sandbox: FreshSandbox): FunctionPool {
  return new FunctionPool({
    spec: sandbox.spec,
    bundleDir: () => sandbox.bundleDir,
    runtime: sandbox.runtime,
    environment: () => sandbox.environment,
    userEnv: sandbox.userEnv,
    log: () => undefined,
    say: (line) => process.stderr.write(`  ${line}\n`),
    idleMs: 600_000,
  });
}

/** A sandbox of the bench's own (another configuration of a function), its instances kept warm until stopped. */
export function warmSandbox(sandbox: FreshSandbox): { invoke: Invoker; stop(): Promise<void> } {
  const pool = poolOf(sandbox);
  return { invoke: (event, requestId) => pool.invoke(event, requestId), stop: () => pool.stop() };
}

/** Runs one event in an instance of its own, then stops it. */
export async function invokeFresh(
  sandbox: FreshSandbox,
  event: unknown,
  options: {
    /** Called with the instance's pid once its answer is complete and its figures read, before it is stopped. */
    beforeStop?: (pid: number) => Promise<void>;
    /** The invocation's X-Ray trace header, as Lambda hands it over; by default a new trace X-Ray does not sample (a direct invocation). */
    traceId?: string;
  } = {},
): Promise<FreshRun> {
  const { beforeStop, traceId } = options;
  const pool = poolOf(sandbox);
  try {
    const started = performance.now();
    const outcome = await pool.invoke(event, randomUUID(), traceId);
    const answer = await answerOf(outcome, started);
    const initMs = outcome.initDurationMs ?? 0;
    // The instance's figures are read as its answer completes: wait for the pool to see that.
    for (let i = 0; i < 100 && pool.stats().instances.every((instance) => instance.state === 'busy'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [instance] = pool.stats().instances;
    const threads = instance ? threadCpu(instance.pid) : undefined;
    if (instance && beforeStop) await beforeStop(instance.pid);
    return {
      ...answer,
      wallMs: answer.ms,
      initMs,
      invokeMs: answer.ms - initMs,
      maxRssMiB: (instance?.peakRssBytes ?? 0) / 1_048_576,
      cpuMs: instance?.cpuMs ?? 0,
      threads,
    };
  } finally {
    await pool.stop();
  }
}
