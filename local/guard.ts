import type { IncomingMessage, OutgoingHttpHeaders, RequestListener, ServerResponse } from 'node:http';
import { FAILURE_HEADERS } from './failure.js';
import { headerValues } from './listener-io.js';
import { hostValue, ownHosts } from './own-address.js';

/**
 * The one guard of every listener the local stack starts: the public gateway (with the
 * authorization server and the MCP App preview host on it), the private gateway, the embedded
 * DynamoDB engine and each function instance's Lambda Runtime API. They bind loopback, but a
 * browser reaches loopback too: a page of any site can send requests there (fetch, XHR, a form, an
 * image), and a name that rebinds to 127.0.0.1 (DNS rebinding) or a tunnel makes them look
 * same-origin. So a request is admitted only when:
 * - it names the listener by its own name and port (`Host`: a loopback name with the port the
 *   request came in on, or a name the user opted in to: HOST, PUBLIC_URL);
 * - it comes from no web page, or from a page of an origin the listener serves (`Origin`). A
 *   listener that serves no page at all (the engine, the Runtime APIs, the private gateway) also
 *   refuses what a browser marks as its own (`Sec-Fetch-Site`), which a page's no-cors GET carries
 *   without an Origin. Programs (the AWS SDK, Node's fetch, a runtime client, curl) send neither.
 * A refused request gets a 403 and one text/plain sentence before anything behind the guard runs,
 * so it changes nothing. And no answer of a guarded listener carries
 * `Access-Control-Allow-Origin: *`, whatever the handler behind it wrote (dynalite writes it).
 */

export interface ListenerPolicy {
  /** Host values beyond the loopback names at the listener's own port (`host[:port]`, or a bare name at that port). */
  extraHosts?: () => readonly string[];
  /** The origins whose pages the listener serves, and how a refusal names them; absent: it serves no web page. */
  pages?: { origins: () => readonly string[]; named: string };
}

/** What a listener that serves no web page admits: its own loopback names, no Origin, nothing a browser marks as its own. */
export const NO_PAGES: ListenerPolicy = Object.freeze({});

/** The guard's sentence for a request that names another host than the listener on `port`: only this stack says it so. */
export function foreignHostRefusal(port: number): string {
  return `This local service answers only requests addressed to it by its own name (Host: ${hostValue('localhost', port)}); this one names another host.`;
}

/**
 * Why `policy` refuses this request, in one sentence; undefined when it is admitted. The listener's
 * port is the one the request came in on, so a listener bound to port 0 needs no telling.
 */
export function refusal(req: IncomingMessage, policy: ListenerPolicy): string | undefined {
  const port = req.socket.localPort ?? 0;
  const hosts = headerValues(req, 'host');
  const own = ownHosts(port, policy.extraHosts?.() ?? []);
  if (hosts.length !== 1 || !own.has((hosts[0] ?? '').trim().toLowerCase())) return foreignHostRefusal(port);
  const origins = headerValues(req, 'origin');
  if (!policy.pages) {
    if (origins.length > 0 || headerValues(req, 'sec-fetch-site').length > 0)
      return 'This local service answers no web page, and this request comes from one (it carries Origin or Sec-Fetch-Site).';
    return undefined;
  }
  if (origins.length > 1 || (origins.length === 1 && !policy.pages.origins().includes(origins[0] ?? '')))
    return `This local service answers web pages of ${policy.pages.named} only; this request comes from another origin.`;
  return undefined;
}

/** A refusal (the guard's is a 403): the sentence as text, never cached, the connection closed (the body is not read). */
export function sendRefusal(res: ServerResponse, sentence: string, status = 403): void {
  res.writeHead(status, { ...FAILURE_HEADERS, 'X-Content-Type-Options': 'nosniff', Connection: 'close' });
  res.end(`${sentence}\n`);
}

const ANY_ORIGIN = 'access-control-allow-origin';

/**
 * Keeps `Access-Control-Allow-Origin: *` out of this response, however its handler writes its
 * headers (`setHeader`, or `writeHead` with an object or a flat list): Node writes every header
 * through `writeHead`, an implicit one included, so that is where it is taken out.
 */
export function neverAnyOrigin(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  const isAny = (name: unknown, value: unknown): boolean =>
    String(name).toLowerCase() === ANY_ORIGIN && [value].flat().some((v) => String(v).trim() === '*');
  res.writeHead = ((...args: unknown[]) => {
    if (isAny(ANY_ORIGIN, res.getHeader(ANY_ORIGIN))) res.removeHeader(ANY_ORIGIN);
    const at = args.findIndex((arg, i) => i > 0 && typeof arg === 'object' && arg !== null);
    const headers = args[at];
    if (Array.isArray(headers)) {
      const kept: unknown[] = [];
      for (let i = 0; i < headers.length; i += 2) if (!isAny(headers[i], headers[i + 1])) kept.push(headers[i], headers[i + 1]);
      args[at] = kept;
    } else if (headers) {
      args[at] = Object.fromEntries(Object.entries(headers as OutgoingHttpHeaders).filter(([name, value]) => !isAny(name, value)));
    }
    return writeHead(...args);
  }) as ServerResponse['writeHead'];
}

/** A listener's request handler behind the guard: a refused request never reaches `handler`. */
export function guarded(policy: ListenerPolicy, handler: RequestListener): RequestListener {
  return (req, res) => {
    const refused = refusal(req, policy);
    if (refused !== undefined) {
      req.resume();
      sendRefusal(res, refused);
      return;
    }
    neverAnyOrigin(res);
    handler(req, res);
  };
}
