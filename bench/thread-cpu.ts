import { readdirSync, readFileSync } from 'node:fs';

/**
 * A Node process's CPU time by thread kind, from /proc (Linux): its JavaScript thread, V8's helper
 * threads (concurrent marking and sweeping, parallel scavenges: garbage collection off the main
 * thread), libuv's pool (zlib's and brotli's compression of a stream runs there), and the rest.
 * A CPU profile samples the main thread only; this says what it cannot see.
 */
export interface ThreadCpu {
  mainMs: number;
  gcHelpersMs: number;
  poolMs: number;
  otherMs: number;
}

/** The kind of a thread by the name Node gives it (`MainThread`, `V8Worker`, `libuv-worker`…; the kernel keeps 15 characters). */
export function threadKind(name: string): keyof ThreadCpu {
  if (name === 'MainThread' || name === 'node') return 'mainMs';
  if (name.startsWith('V8Worker') || name.startsWith('V8 DefaultWork')) return 'gcHelpersMs';
  if (name.startsWith('libuv-worker')) return 'poolMs';
  return 'otherMs';
}

/** One /proc/<pid>/task/<tid>/stat line: the thread's name and its user + system time in ms (clock ticks of 10 ms). */
export function threadStat(stat: string): { name: string; cpuMs: number } {
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  // The fields after the name (which may hold spaces), from the third on: utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name, cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
}

/** A live process's CPU by thread kind, or undefined where /proc cannot be read. */
export function threadCpu(pid: number | 'self' = 'self'): ThreadCpu | undefined {
  try {
    const out: ThreadCpu = { mainMs: 0, gcHelpersMs: 0, poolMs: 0, otherMs: 0 };
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const { name, cpuMs } = threadStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      out[threadKind(name)] += cpuMs;
    }
    return out;
  } catch {
    return undefined;
  }
}

/** A live process's peak resident memory (VmHWM), in bytes, or undefined where /proc cannot be read. */
export function peakRssBytes(pid: number | 'self' = 'self'): number | undefined {
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
