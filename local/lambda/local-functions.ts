import { join } from 'node:path';
import type { FunctionName } from '../../infra/build.js';
import type { LocalBundles } from './bundles.js';
import type { LambdaFunctionSpec } from './function-specs.js';
import type { FunctionError } from './runtime-api.js';
import type { LambdaRuntime } from './runtimes.js';
import { FunctionPool, type InvocationOutcome, type PoolStats } from './sandbox.js';

/**
 * The deployed functions of the local stack, each in its own sandboxes (local/lambda/sandbox.ts),
 * running its bundle from `bundles`; a rebuilt bundle retires the instances running the old one.
 */
export interface LocalFunctions {
  readonly specs: Readonly<Record<FunctionName, LambdaFunctionSpec>>;
  /** Invokes a function with one event, as Lambda's Invoke (or InvokeWithResponseStream) does, in the trace `traceId` names (a new one when none). */
  invoke(name: FunctionName, event: unknown, requestId: string, traceId?: string): Promise<InvocationOutcome>;
  /** The variables each instance of the function starts with, besides Lambda's runtime ones. */
  environment(name: FunctionName): Readonly<Record<string, string>>;
  /**
   * Gives a function new variables as Lambda's UpdateFunctionConfiguration does: when they differ,
   * the next event goes to an instance started with them (a warm one left from when the function
   * last had exactly these variables, else a new one; FunctionPool.environmentChanged).
   */
  setEnvironment(name: FunctionName, environment: Readonly<Record<string, string>>): void;
  stats(name: FunctionName): PoolStats;
  /** Of `names`, each function whose instance cannot finish its init (a bad variable, a bundle that throws), with its error. */
  checkInits(names: readonly FunctionName[]): Promise<Array<{ name: FunctionName; error: FunctionError }>>;
  stop(): Promise<void>;
}

export interface LocalFunctionsOptions {
  specs: Readonly<Record<FunctionName, LambdaFunctionSpec>>;
  bundles: LocalBundles;
  /** The runtime instances run the bundles under (local/lambda/runtimes.ts). */
  runtime: LambdaRuntime;
  environment: (spec: LambdaFunctionSpec) => Record<string, string>;
  userEnv: NodeJS.ProcessEnv;
  /** A line a function wrote (its logs): on the stack's stdout and stderr unless told otherwise. */
  log?: (name: FunctionName, line: string, stream: 'stdout' | 'stderr') => void;
  say: (line: string) => void;
  /** How long a warm instance waits for an event before it is stopped (default 10 minutes). */
  idleMs?: number;
}

const writeLine = (_name: FunctionName, line: string, stream: 'stdout' | 'stderr'): void => {
  process[stream].write(`${line}\n`);
};

/** Whether two environments hold the same variables with the same values. */
export function sameVariables(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  return Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([name, value]) => b[name] === value);
}

export function startLocalFunctions(options: LocalFunctionsOptions): LocalFunctions {
  const log = options.log ?? writeLine;
  // Once, when the functions start, where they do not run on Lambda's Node major: which Node they run on instead.
  if (!options.runtime.onLambdaMajor) options.say(options.runtime.description);
  const pools = {} as Record<FunctionName, FunctionPool>;
  const environments = {} as Record<FunctionName, Record<string, string>>;
  for (const [name, spec] of Object.entries(options.specs) as Array<[FunctionName, LambdaFunctionSpec]>) {
    environments[name] = Object.freeze(options.environment(spec));
    pools[name] = new FunctionPool({
      spec,
      bundleDir: () => join(options.bundles.dir, name),
      runtime: options.runtime,
      environment: () => environments[name],
      userEnv: options.userEnv,
      log: (line, stream) => log(name, line, stream),
      say: options.say,
      idleMs: options.idleMs ?? 600_000,
    });
  }
  options.bundles.onChange((changed) => {
    for (const name of changed) pools[name]?.retire();
  });
  return {
    specs: options.specs,
    invoke: (name, event, requestId, traceId) => pools[name].invoke(event, requestId, traceId),
    environment: (name) => environments[name],
    setEnvironment(name, environment) {
      if (sameVariables(environments[name], environment)) return;
      environments[name] = Object.freeze({ ...environment });
      pools[name].environmentChanged();
    },
    stats: (name) => pools[name].stats(),
    async checkInits(names) {
      const checked = await Promise.all(names.map(async (name) => ({ name, error: await pools[name].checkInit() })));
      return checked.filter((c): c is { name: FunctionName; error: FunctionError } => c.error !== undefined);
    },
    async stop() {
      await Promise.all(Object.values(pools).map((pool) => pool.stop()));
      await options.bundles.stop();
    },
  };
}
