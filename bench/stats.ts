/** The median (the mean of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const at = (i: number): number => s[i] ?? Number.NaN;
  return s.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}

/**
 * Times each of `subjects` `runs` times, interleaved: every round runs each subject once, in an
 * order that rotates from round to round, so that drift and noise on a shared machine fall on all
 * of them alike. `warmup` rounds run first and are not kept. Returns the times in ms per subject:
 * measured here around the call, or, for a subject that resolves to `{ ms }`, the time it measured
 * where it ran (the floors, in the process on the function's core: no message passing counted).
 */
export async function interleaved<K extends string>(
  subjects: Record<K, () => Promise<unknown>>,
  runs: number,
  warmup = 1,
): Promise<Record<K, number[]>> {
  const entries = Object.entries(subjects) as Array<[K, () => Promise<unknown>]>;
  const times = Object.fromEntries(entries.map(([name]) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = -warmup; round < runs; round++) {
    const shift = ((round % entries.length) + entries.length) % entries.length;
    for (let i = 0; i < entries.length; i++) {
      const [name, run] = entries[(i + shift) % entries.length] as [K, () => Promise<unknown>];
      const started = performance.now();
      const outcome = await run();
      const elapsed = performance.now() - started;
      const own = (outcome as { ms?: unknown } | undefined)?.ms;
      if (round >= 0) times[name].push(typeof own === 'number' ? own : elapsed);
    }
  }
  return times;
}

/** The first (or, with -1, the last) of a list the bench just filled: a list found empty is a bench bug, said at once. */
export function at<T>(list: readonly T[], index: 0 | -1 = 0): T {
  const value = list.at(index);
  if (value === undefined) throw new Error('the bench expected a result it did not record');
  return value;
}

/** `value` with thousands separators. */
export const n = (value: number): string => Math.round(value).toLocaleString('en');
