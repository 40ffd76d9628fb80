/**
 * Drops a map's expired entries, then its oldest while it holds more than `max` (Maps keep
 * insertion order): the one bound of the local stack's in-memory stores (codes, refresh tokens,
 * sign-ins in progress, the emulated authorizer's cache).
 */
export function prune<T extends { expiresAt: number }>(map: Map<string, T>, max: number, now = Date.now()): void {
  for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
  while (map.size > max) map.delete(map.keys().next().value as string);
}
