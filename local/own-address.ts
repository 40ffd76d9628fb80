/**
 * The names of this machine, for the local listeners (local/guard.ts checks every request
 * against them) and for what the local authorization server lets a client name (redirect URIs,
 * client ID metadata documents on http).
 */

/** The loopback names of this machine, as they appear in a Host header or a URL's `hostname`. */
export const LOOPBACK_NAMES: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '[::1]']);

/** Whether an address to bind names this machine only (the default), not a network interface or all of them. */
export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127(\.[0-9]{1,3}){3}$/.test(address);
}

/** The `host[:port]` a Host header carries for `name` at `port` (the port left out at 80, as HTTP clients do). */
export function hostValue(name: string, port: number): string {
  return (port === 80 ? name : `${name}:${port}`).toLowerCase();
}

/**
 * The Host values a listener on `port` answers: its loopback names, and each extra `host[:port]`
 * or bare name (given the listener's port).
 */
export function ownHosts(port: number, extra: readonly string[] = []): ReadonlySet<string> {
  const named = extra.map((value) => (/:[0-9]+$/.test(value) ? value.toLowerCase() : hostValue(value, port)));
  return new Set([...LOOPBACK_NAMES.map((name) => hostValue(name, port)), ...named]);
}

/** The origins of pages a listener on `port` serves itself: `http://` and each of its loopback names with the port. */
export function loopbackOrigins(port: number): string[] {
  return LOOPBACK_NAMES.map((name) => `http://${hostValue(name, port)}`);
}
