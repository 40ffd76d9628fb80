import { readdirSync, readFileSync } from 'node:fs';
import { type ProcessId, residentBytes, statCpu } from '../local/lambda/proc.js';

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

/** A live process's CPU by thread kind, or undefined where /proc cannot be read. */
export function threadCpu(pid: ProcessId = 'self'): ThreadCpu | undefined {
  try {
    const out: ThreadCpu = { mainMs: 0, gcHelpersMs: 0, poolMs: 0, otherMs: 0 };
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const { name, cpuMs } = statCpu(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      out[threadKind(name)] += cpuMs;
    }
    return out;
  } catch {
    return undefined;
  }
}

/** A live process's peak resident memory (VmHWM), in bytes, or undefined where /proc cannot be read. */
export function peakRssBytes(pid: ProcessId = 'self'): number | undefined {
  return residentBytes(pid, 'VmHWM');
}
