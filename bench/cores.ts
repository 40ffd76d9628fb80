import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hasTaskset } from '../local/lambda/runtimes.js';

/**
 * The function on a core of its own, as Lambda gives it its vCPU while DynamoDB and API Gateway run
 * elsewhere: the bench's own process (the local stack's gateway and Runtime APIs, the issuer, the
 * reader of every answer) and the engine in its child stand for AWS's side on one core; every
 * function instance (LAMBDA_RUNTIME_CPUS, local/lambda/runtimes.ts) and the process that runs
 * the floors and the in-process call (bench/function-core.ts) on another. taskset sets the
 * affinity; a child inherits its parent's, so the engine, started after the bench pinned itself,
 * shares the bench's core. With fewer than two CPUs allowed, or no taskset, nothing is pinned and
 * the bench says so.
 */
export interface CorePlan {
  /** AWS's side: this process and the engine (a CPU list as taskset reads it), when pinned. */
  service: string | undefined;
  /** The function's instances and the floors' readers, when pinned. */
  function: string | undefined;
  /** One sentence for the log and the report. */
  description: string;
}

/** The CPUs a CPU list names (`0-1,3` is 0, 1 and 3). */
export function cpuList(list: string): number[] {
  return list
    .trim()
    .split(',')
    .filter(Boolean)
    .flatMap((part) => {
      const [from, to = from] = part.split('-').map(Number);
      if (from === undefined || to === undefined || !Number.isInteger(from) || !Number.isInteger(to) || to < from) return [];
      return Array.from({ length: to - from + 1 }, (_, i) => from + i);
    });
}

/** The CPUs this process may run on (Linux: /proc/self/status), or undefined where that cannot be read. */
function allowedCpus(): number[] | undefined {
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return list === undefined ? undefined : cpuList(list);
  } catch {
    return undefined;
  }
}

/**
 * The plan for this machine: the first CPU this process may use for AWS's side, the second for the
 * function; unpinned with the reason when there are not two, or no taskset.
 */
export function corePlan(allowed: number[] | undefined = allowedCpus(), taskset = hasTaskset()): CorePlan {
  const unpinned = (why: string): CorePlan => ({ service: undefined, function: undefined, description: `unpinned: ${why}` });
  if (!taskset) return unpinned('taskset (util-linux) is not on this machine, so every process shares every core');
  if (!allowed || allowed.length < 2) {
    return unpinned(
      `${allowed?.length ?? 'an unknown number of'} CPU${allowed?.length === 1 ? '' : 's'} allowed here: the function shares its core with the engine and the stack`,
    );
  }
  const [service, fn] = allowed.map(String);
  return {
    service,
    function: fn,
    description: `pinned: the engine, the stack (gateway, Runtime APIs) and the bench's reader on CPU ${service}; each function instance, the floors and the in-process call on CPU ${fn}`,
  };
}

/** Confines this process, every thread of it, to the plan's service CPU (its children inherit it). */
export function pinThisProcess(plan: CorePlan): void {
  if (!plan.service) return;
  const run = spawnSync('taskset', ['-a', '-p', '-c', plan.service, String(process.pid)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`taskset could not pin the bench to CPU ${plan.service}: ${run.stderr.trim()}`);
}

export { onCpus } from '../local/lambda/runtimes.js';
