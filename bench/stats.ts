/** The median (the mean of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * Times each of `subjects` `runs` times, interleaved: every round runs each subject once, in an
 * order that rotates from round to round, so that drift and noise on a shared machine fall on all
 * of them alike. `warmup` rounds run first and are not kept. Returns the times in ms per subject.
 */
export async function interleaved(
  subjects: Record<string, () => Promise<unknown>>,
  runs: number,
  warmup = 1,
): Promise<Record<string, number[]>> {
  const names = Object.keys(subjects);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = -warmup; round < runs; round++) {
    const shift = ((round % names.length) + names.length) % names.length;
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + shift) % names.length]!;
      const started = performance.now();
      await subjects[name]!();
      if (round >= 0) times[name]!.push(performance.now() - started);
    }
  }
  return times;
}

/** `value` with thousands separators. */
export const n = (value: number): string => Math.round(value).toLocaleString('en');
