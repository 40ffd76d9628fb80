import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { invocationTrace } from '../trace-header.js';
import { runtimeEnvironment } from './environment.js';
import type { LambdaFunctionSpec } from './function-specs.js';
import { cpuTimeMs, residentBytes } from './proc.js';
import { type FunctionError, type RuntimeAnswer, type RuntimeApi, STREAM_CUT, startRuntimeApi } from './runtime-api.js';
import { RUNTIME_TOKEN } from './runtime-token.js';
import type { LambdaRuntime } from './runtimes.js';

/**
 * A local function's execution environments, as Lambda keeps them: each instance a child process
 * of its own (its own heap, bounded by the V8 flags of its NODE_OPTIONS, its own process.env, and a
 * crash that ends only it) running the runtime client and the function's bundle, fed one event at a
 * time through its own Runtime API. An instance is started when an event finds none free (a cold
 * start, its init timed as Lambda's `Init Duration`), reused while warm, and stopped after an idle
 * time; no more run at once than the function's reserved concurrency (beyond it: throttled). Past
 * its `timeout`, or above its `memorySize` (resident memory, read from /proc), an instance is
 * stopped as Lambda stops it, and the event fails with Lambda's error; the next event gets a fresh
 * instance. docs/decisions.md says why a child process and not a worker thread.
 */

/** Lambda's limit on a function's init phase (on-demand). */
const INIT_TIMEOUT_MS = 10_000;
/** How often an instance's resident memory is read while it starts or runs an event. */
const MEMORY_POLL_MS = 100;

/** How an event fared, for the gateway. */
export type InvocationOutcome = (
  | { type: 'throttled' }
  | { type: 'failed'; error: FunctionError }
  | { type: 'buffered'; payload: Buffer }
  // The Runtime API's stream answer as it is, but for the runtime's next ask, which only the instance watches (a cut stream).
  | (Omit<Extract<RuntimeAnswer, { kind: 'stream' }>, 'kind' | 'nextAsked'> & { type: 'stream' })
) & {
  /** The instance's init time when this event started it (a cold start). */
  initDurationMs?: number;
};

export interface InstanceStats {
  pid: number;
  /** `answered`: its event's answer is complete, its runtime not yet back for the next (it may be given one, which waits for it). */
  state: 'starting' | 'idle' | 'busy' | 'answered' | 'stopped';
  invocations: number;
  initDurationMs: number | undefined;
  /** Its largest resident memory so far (the kernel's high-water mark), in bytes (0 where /proc is absent). */
  peakRssBytes: number;
  /** The CPU time it used so far (user and system), in ms, as of its last answer (0 where /proc is absent). */
  cpuMs: number;
}

export interface PoolStats {
  instances: InstanceStats[];
  /** Events handed to an instance so far. */
  invocations: number;
  /** Instances ever started (cold starts), stopped ones included. */
  coldStarts: number;
  throttles: number;
  /** Every instance's peak resident memory so far, stopped ones included, in bytes. */
  peakRssBytes: number;
  /** Lambda-style durations of the events answered so far, in ms: from the event handed over until the runtime asked for the next. */
  durationsMs: number[];
}

export interface SandboxOptions {
  spec: LambdaFunctionSpec;
  /** The function's bundle folder (LAMBDA_TASK_ROOT, its working directory): `index.mjs` inside. */
  bundleDir: () => string;
  /** The runtime instances run the bundle under (local/lambda/runtimes.ts): ours, or AWS's. */
  runtime: LambdaRuntime;
  /** The function's own variables (local/lambda/environment.ts functionEnvironment), read as each instance starts. */
  environment: () => Readonly<Record<string, string>>;
  /** The environment `npm start` runs in, for what Lambda's runtime variables take from it (credentials, region, PATH). */
  userEnv: NodeJS.ProcessEnv;
  /** A line the function wrote on stdout or stderr (its logs). */
  log: (line: string, stream: 'stdout' | 'stderr') => void;
  /** A line of the stack's own about this function (a crash, a timeout, memory, an init failure). */
  say: (line: string) => void;
  /** How long a warm instance waits for an event before it is stopped. */
  idleMs: number;
}

/** Environments a function's idle instances are kept for: the one in force and the one before it. */
const KEPT_ENVIRONMENTS = 2;

const environmentKeys = new WeakMap<Readonly<Record<string, string>>, string>();
/** The contents of an environment as one string, the same for equal variables whatever their order (kept per object). */
function environmentKey(environment: Readonly<Record<string, string>>): string {
  let key = environmentKeys.get(environment);
  if (key === undefined) {
    key = JSON.stringify(Object.entries(environment).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    environmentKeys.set(environment, key);
  }
  return key;
}

/** Why an instance was stopped, as Lambda names it to the invocation in flight. */
type StopReason =
  | { kind: 'timeout' }
  | { kind: 'memory'; rssBytes: number }
  | { kind: 'exit'; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'idle' }
  | { kind: 'retired' }
  | { kind: 'stack' };

class Instance {
  state: InstanceStats['state'] = 'starting';
  invocations = 0;
  initDurationMs: number | undefined;
  peakRssBytes = 0;
  cpuMs = 0;
  generation: number;
  /** The variables it started with, as environmentKey gives them: it runs events only while the function has exactly these. */
  readonly environment: string;
  private readonly child: ChildProcess;
  private memoryTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private invocationTimer: NodeJS.Timeout | undefined;
  private invokedAt = 0;
  private stopReason: StopReason | undefined;
  readonly exited: Promise<void>;

  private constructor(
    private readonly options: SandboxOptions,
    private readonly api: RuntimeApi,
    /** The token its runtime client sends the Runtime API (ours); undefined for AWS's client, known by its connection. */
    token: string | undefined,
    generation: number,
    private readonly onFree: (instance: Instance, durationMs: number | undefined) => void,
  ) {
    this.generation = generation;
    const { spec } = options;
    const taskRoot = options.bundleDir();
    const logStream = `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomBytes(16).toString('hex')}`;
    // Through taskset when the runtime confines instances to some CPUs: it sets the affinity and
    // becomes the runtime's Node (exec), so the pid, /proc and signals are the instance's own.
    const { file, args } = options.runtime.command(spec.handler);
    const environment = options.environment();
    this.environment = environmentKey(environment);
    this.child = spawn(file, args, {
      cwd: taskRoot,
      env: {
        ...environment,
        ...runtimeEnvironment(spec, { runtimeApi: api.address, taskRoot, runtimeDir: options.runtime.dir, logStream }, options.userEnv),
        ...(token ? { [RUNTIME_TOKEN.variable]: token } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const [stream, input] of [
      ['stdout', this.child.stdout],
      ['stderr', this.child.stderr],
    ] as const) {
      if (input) createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => options.log(line, stream));
    }
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.stopped({ kind: 'exit', code, signal });
        resolve();
      });
      this.child.once('error', () => {
        this.stopped({ kind: 'exit', code: null, signal: null });
        resolve();
      });
    });
    api.onNext(() => this.waiting());
    this.watchMemory();
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Starts an instance and waits for its init (its runtime's first GET /next); throws the init's FunctionError. */
  static async start(
    options: SandboxOptions,
    generation: number,
    onFree: (instance: Instance, durationMs: number | undefined) => void,
  ): Promise<Instance> {
    // The Runtime API answers this instance's runtime alone (local/lambda/runtime-api.ts, RuntimeOwner).
    const token = options.runtime.name === 'local' ? randomBytes(32).toString('base64url') : undefined;
    let runtimePid = 0;
    const api = await startRuntimeApi(token ? { token } : { pid: () => runtimePid });
    const started = performance.now();
    const instance = new Instance(options, api, token, generation, onFree);
    runtimePid = instance.pid;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        api.initialized,
        instance.exited.then(() => Promise.reject(instance.exitError())),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject({ errorType: 'Runtime.InitTimeout', errorMessage: `Init timed out after ${INIT_TIMEOUT_MS / 1000} seconds` }),
            INIT_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (error) {
      const failure = error as FunctionError;
      options.say(
        `${options.spec.name}: init failed (${failure.errorType}: ${firstLine(failure.errorMessage)}); the next request starts a new instance.`,
      );
      await instance.stop({ kind: 'retired' });
      throw failure;
    } finally {
      clearTimeout(timer);
    }
    instance.initDurationMs = performance.now() - started;
    instance.state = 'idle';
    return instance;
  }

  /**
   * Hands the instance one event (its runtime gets it at its next GET /next) with its trace header
   * (a new unsampled trace when the caller names none, local/trace-header.ts); resolves
   * with the runtime's answer, or the error the instance was stopped with.
   */
  async invoke(event: unknown, requestId: string, traceId?: string): Promise<InvocationOutcome> {
    const { spec } = this.options;
    this.state = 'busy';
    this.invocations += 1;
    clearTimeout(this.idleTimer);
    this.invokedAt = performance.now();
    this.watchMemory();
    const timeoutMs = spec.timeoutSeconds * 1000;
    this.invocationTimer = setTimeout(() => void this.stop(this.overMemory() ?? { kind: 'timeout' }), timeoutMs);
    const answer = await this.api.invoke({
      requestId,
      event,
      deadlineMs: Date.now() + timeoutMs,
      functionArn: `arn:aws:lambda:${spec.region}:000000000000:function:${spec.functionName}`,
      traceId: traceId ?? invocationTrace(),
    });
    if (answer.kind === 'stream') {
      // A cut stream may be a runtime that died with it (its exit, seen a moment later, stops the
      // instance): it is given no other event until its runtime asks for one.
      void answer.ended.then((error) => (error === STREAM_CUT ? answer.nextAsked.then(() => this.askedAfterCut()) : this.answered()));
      return { type: 'stream', contentType: answer.contentType, body: answer.body, ended: answer.ended, abort: answer.abort };
    }
    this.answered();
    return answer.kind === 'buffered' ? { type: 'buffered', payload: answer.payload } : { type: 'failed', error: answer.error };
  }

  /**
   * Its event's answer is complete (a stream ended or was cut): its timeout no longer runs, and it
   * may be given the next event, which its runtime gets as soon as it asks (Lambda's runtime asks
   * right after it answered).
   */
  private answered(): void {
    if (this.state !== 'busy') return;
    clearTimeout(this.invocationTimer);
    this.peakRssBytes = Math.max(this.peakRssBytes, residentBytes(this.pid, 'VmHWM') ?? 0);
    this.cpuMs = cpuTimeMs(this.pid) ?? this.cpuMs;
    this.state = 'answered';
    this.idleTimer = setTimeout(() => void this.stop({ kind: 'idle' }), this.options.idleMs);
    this.idleTimer.unref();
    this.onFree(this, performance.now() - this.invokedAt);
  }

  /** Its event's stream was cut and its runtime has asked for the next event since (a dead one never does): it is free. */
  private askedAfterCut(): void {
    this.answered();
    this.waiting();
  }

  /** Its runtime asked for the next event: when none was given to it meanwhile, it waits idle. */
  private waiting(): void {
    if (this.state !== 'answered') return;
    this.state = 'idle';
    this.stopWatchingMemory();
  }

  /**
   * The memory stop when the instance holds more than its memorySize now. Lambda's limit holds at
   * every moment (a cgroup); this reading is a sample, so the deadline takes one more before it
   * calls an instance over its memory a timeout (on a loaded machine the last poll may be late).
   */
  private overMemory(): { kind: 'memory'; rssBytes: number } | undefined {
    const rss = residentBytes(this.pid);
    if (rss === undefined) return undefined;
    this.peakRssBytes = Math.max(this.peakRssBytes, rss);
    return rss > this.options.spec.memorySizeMb * 1024 * 1024 ? { kind: 'memory', rssBytes: rss } : undefined;
  }

  private watchMemory(): void {
    if (this.memoryTimer) return;
    this.memoryTimer = setInterval(() => {
      const over = this.overMemory();
      if (over) void this.stop(over);
    }, MEMORY_POLL_MS);
  }

  private stopWatchingMemory(): void {
    clearInterval(this.memoryTimer);
    this.memoryTimer = undefined;
  }

  private exitError(): FunctionError {
    const reason = this.stopReason;
    const { spec } = this.options;
    if (reason?.kind === 'timeout')
      return { errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${spec.timeoutSeconds.toFixed(2)} seconds` };
    if (reason?.kind === 'memory') {
      return {
        errorType: 'Runtime.OutOfMemory',
        errorMessage: `Runtime exited with error: signal: killed (memory ${Math.round(reason.rssBytes / 1024 / 1024)} MB over its memorySize of ${spec.memorySizeMb} MB)`,
      };
    }
    if (reason?.kind === 'exit') {
      return {
        errorType: 'Runtime.ExitError',
        errorMessage: `Runtime exited with error: ${reason.signal ? `signal: ${reason.signal}` : `exit status ${reason.code}`}`,
      };
    }
    return { errorType: 'Runtime.ExitError', errorMessage: 'Runtime exited: the instance was stopped' };
  }

  /** The child is gone (it ended, or was stopped): fail what was in flight, say why when it was not asked for, let go of its Runtime API. */
  private stopped(reason: StopReason): void {
    if (this.state === 'stopped') return;
    this.stopReason ??= reason;
    const wasBusy = this.state === 'busy';
    this.state = 'stopped';
    clearTimeout(this.invocationTimer);
    clearTimeout(this.idleTimer);
    this.stopWatchingMemory();
    const error = this.exitError();
    this.api.fail(error);
    void this.api.close();
    const why = this.stopReason;
    if (why.kind === 'timeout' || why.kind === 'memory' || (why.kind === 'exit' && wasBusy)) {
      this.options.say(
        `${this.options.spec.name}: ${error.errorMessage} (${error.errorType}); the instance is gone, the next request starts a new one.`,
      );
    }
    this.onFree(this, undefined);
  }

  /** Stops the child (SIGKILL: Lambda does not ask a timed-out or oversized environment to leave). */
  async stop(reason: StopReason): Promise<void> {
    if (this.state === 'stopped') return;
    this.stopReason ??= reason;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  stats(): InstanceStats {
    return {
      pid: this.pid,
      state: this.state,
      invocations: this.invocations,
      initDurationMs: this.initDurationMs,
      peakRssBytes: this.peakRssBytes,
      cpuMs: this.cpuMs,
    };
  }
}

function firstLine(text: string): string {
  return (text.split('\n')[0] ?? '').slice(0, 300);
}

/** One function's instances (see the file's header). */
export class FunctionPool {
  private readonly instances = new Set<Instance>();
  /**
   * Warm instances, the most recently used last (taken first, as Lambda reuses the warmest). Those
   * of an earlier environment wait here too (see environmentChanged), given no event until the
   * function has that environment again.
   */
  private readonly idle: Instance[] = [];
  /** The environments idle instances are kept for, the one in force first. */
  private kept: string[];
  private generation = 0;
  private coldStarts = 0;
  private throttles = 0;
  private invocations = 0;
  private peakRssBytes = 0;
  private readonly durationsMs: number[] = [];
  private stopping = false;
  /** Instances being started count against the concurrency, as each will run an event. */
  private readonly starting = new Set<symbol>();

  constructor(readonly options: SandboxOptions) {
    this.kept = [environmentKey(options.environment())];
  }

  get name(): string {
    return this.options.spec.name;
  }

  /**
   * Invokes the function with one event: on a warm instance of its current environment, else a new
   * one (a cold start) while fewer than its reserved concurrency run, else throttled.
   */
  async invoke(event: unknown, requestId: string, traceId?: string): Promise<InvocationOutcome> {
    const environment = environmentKey(this.options.environment());
    let instance = this.takeIdle(environment);
    let initDurationMs: number | undefined;
    if (!instance) {
      const { spec } = this.options;
      // An idle instance of an earlier environment gives its place to the current one's.
      if (this.instances.size + this.starting.size >= spec.reservedConcurrency) this.stopOneWaiting(environment);
      if (this.stopping || this.instances.size + this.starting.size >= spec.reservedConcurrency) {
        this.throttles += 1;
        this.options.say(`${spec.name}: throttled, all ${spec.reservedConcurrency} instances of its reserved concurrency are busy.`);
        return { type: 'throttled' };
      }
      this.coldStarts += 1;
      const placeholder = Symbol('starting');
      this.starting.add(placeholder);
      try {
        instance = await Instance.start(this.options, this.generation, (i, durationMs) => this.freed(i, durationMs));
      } catch (error) {
        return { type: 'failed', error: error as FunctionError };
      } finally {
        this.starting.delete(placeholder);
      }
      this.instances.add(instance);
      initDurationMs = instance.initDurationMs;
    }
    this.invocations += 1;
    const outcome = await instance.invoke(event, requestId, traceId);
    return initDurationMs === undefined ? outcome : { ...outcome, initDurationMs };
  }

  /** The most recently used idle instance of `environment`, taken out of the idle list. */
  private takeIdle(environment: string): Instance | undefined {
    for (let i = this.idle.length - 1; i >= 0; i -= 1) {
      const instance = this.idle[i];
      if (instance?.environment === environment) {
        this.idle.splice(i, 1);
        return instance;
      }
    }
    return undefined;
  }

  /** Stops the least recently used idle instance of another environment than `environment`, if one waits. */
  private stopOneWaiting(environment: string): void {
    const waiting = this.idle.find((instance) => instance.environment !== environment);
    if (waiting) this.stopIdle(waiting);
  }

  /** Stops an idle instance, which at once no longer counts against the concurrency. */
  private stopIdle(instance: Instance): void {
    this.idle.splice(this.idle.indexOf(instance), 1);
    this.instances.delete(instance);
    void instance.stop({ kind: 'retired' });
  }

  private freed(instance: Instance, durationMs: number | undefined): void {
    this.peakRssBytes = Math.max(this.peakRssBytes, instance.peakRssBytes);
    if (durationMs !== undefined) this.durationsMs.push(durationMs);
    const at = this.idle.indexOf(instance);
    if (at >= 0) this.idle.splice(at, 1);
    if (instance.state === 'stopped') {
      this.instances.delete(instance);
      return;
    }
    // Code rebuilt since this instance started, or an environment no longer kept: it serves no more events.
    if (instance.generation !== this.generation || this.stopping || !this.kept.includes(instance.environment)) {
      void instance.stop({ kind: 'retired' });
      return;
    }
    this.idle.push(instance);
  }

  /**
   * Whether the function can start at all: one instance started and stopped once its init is over,
   * with no event (its configuration is read and checked at init). The error its init failed with,
   * or undefined; the next event still meets a cold start, as the first one on Lambda does.
   */
  async checkInit(): Promise<FunctionError | undefined> {
    try {
      const instance = await Instance.start({ ...this.options, say: () => undefined }, this.generation, () => undefined);
      await instance.stop({ kind: 'retired' });
      return undefined;
    } catch (error) {
      return error as FunctionError;
    }
  }

  /** The function's code changed: idle instances stop now, busy ones when their event is over. */
  retire(): void {
    this.generation += 1;
    for (const instance of this.idle.splice(0)) void instance.stop({ kind: 'retired' });
  }

  /**
   * The function's variables changed (UpdateFunctionConfiguration): the next event goes to an
   * instance of the new environment. Idle instances of the environment it had just before wait,
   * and take events again if it comes back (a test puts back what it changed): they are what a
   * warm instance of an unchanged function is, same code, same variables. Lambda would start new
   * ones; the stack spares their cold starts. Instances of older environments stop.
   */
  environmentChanged(): void {
    const environment = environmentKey(this.options.environment());
    this.kept = [environment, ...this.kept.filter((e) => e !== environment)].slice(0, KEPT_ENVIRONMENTS);
    for (const instance of [...this.idle]) {
      if (!this.kept.includes(instance.environment)) this.stopIdle(instance);
    }
  }

  /** Stops every instance (the stack stops). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.idle.length = 0;
    await Promise.all([...this.instances].map((instance) => instance.stop({ kind: 'stack' })));
  }

  stats(): PoolStats {
    const instances = [...this.instances].map((i) => i.stats());
    return {
      instances,
      invocations: this.invocations,
      coldStarts: this.coldStarts,
      throttles: this.throttles,
      peakRssBytes: Math.max(this.peakRssBytes, ...instances.map((i) => i.peakRssBytes)),
      durationsMs: [...this.durationsMs],
    };
  }
}
