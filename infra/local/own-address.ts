import type { IncomingMessage } from 'node:http';

/**
 * The names a local listener answers to. A listener on loopback is still reachable from any web
 * page whose host name rebinds to 127.0.0.1 (DNS rebinding), and from a port-forward or a tunnel:
 * such requests name the page's or tunnel's host in `Host`. So every route refuses a request whose
 * `Host` is not the listener's own name and port: `localhost`, `127.0.0.1` or `[::1]` with its
 * port, plus the names the user opted in to (HOST, PUBLIC_URL).
 */

/** The loopback names of this machine, as they appear in a Host header or a URL's `hostname`. */
export const LOOPBACK_NAMES: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '[::1]']);

/** Whether an address to bind names this machine only (the default), not a network interface or all of them. */
export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127(\.[0-9]{1,3}){3}$/.test(address);
}

/** The `host[:port]` a Host header carries for `name` at `port` (the port left out at 80, as HTTP clients do). */
function hostValue(name: string, port: number): string {
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

/** True when the request has exactly one Host header and it names the listener (`hosts`, from ownHosts). */
export function isForOwnHost(req: IncomingMessage, hosts: ReadonlySet<string>): boolean {
  const values = req.rawHeaders.filter((_, i, all) => i % 2 === 1 && all[i - 1]?.toLowerCase() === 'host');
  return values.length === 1 && hosts.has(values.join('').trim().toLowerCase());
}
