import { readFileSync } from 'node:fs';

/**
 * What Linux's /proc says of a process: its resident memory and its CPU time. The sandboxes read
 * them to stop an instance above its memory size and to report its cost (sandbox.ts), the bench to
 * measure its own processes (bench/thread-cpu.ts). It imports Node's modules only, so the bench's
 * CPU-floor bundle, which measures itself with it, takes in nothing of the stack. Where there is no
 * /proc (not Linux), every reader says undefined.
 */

/** A process, by id, or the one reading. */
export type ProcessId = number | 'self';

/**
 * One stat line (/proc/<pid>/stat, or a thread's /proc/<pid>/task/<tid>/stat): the name and the
 * user + system time in ms (the kernel counts clock ticks, 10 ms each on the kernels Node runs on).
 */
export function statCpu(stat: string): { name: string; cpuMs: number } {
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  // The fields after the name (which may hold spaces), from the third on: utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name, cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
}

/** The CPU time a process used (user and system), in ms; undefined where /proc cannot be read. */
export function cpuTimeMs(pid: ProcessId = 'self'): number | undefined {
  try {
    return statCpu(readFileSync(`/proc/${pid}/stat`, 'utf8')).cpuMs;
  } catch {
    return undefined;
  }
}

/** A process's resident memory now (VmRSS) or at its peak (VmHWM, the kernel's high-water mark), in bytes; undefined where /proc cannot be read. */
export function residentBytes(pid: ProcessId = 'self', field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number | undefined {
  try {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
