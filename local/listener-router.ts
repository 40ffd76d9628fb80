import { type IncomingMessage, METHODS, type ServerResponse } from 'node:http';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { pathOf } from './events.js';
import { LocalRefusal } from './failure.js';
import type { Route } from './template-routes.js';

/**
 * The one route table of a local listener, on find-my-way: the REST API's routes (read from
 * serverless.yml and infra/private-api.yml by template-routes.ts, with the static answers the
 * template is given, answered by the gateway emulation) and the listener's own routes (the authorization
 * server, the MCP App preview host), matched by method and exact path.
 *
 * What a request the table has no route for gets depends on whose path it is, as on AWS:
 * - a path of the stack's own routes asked with another method: 405 with `Allow`, read from the table;
 * - anything else, an API path with another method included: API Gateway's own answer to a method
 *   or path a REST API does not have (MISSING_AUTHENTICATION_TOKEN), written by the gateway.
 */

/** Path parameters of a matched route (`/oauth2/interaction/:uid` gives `uid`). */
export type RouteParams = Readonly<Record<string, string | undefined>>;

/** A handler of the stack's own routes; a thrown LocalRefusal is answered by the listener (text/plain). */
export type LocalHandler = (req: IncomingMessage, res: ServerResponse, requestId: string, params: RouteParams) => Promise<void>;

/** One of the stack's own routes: its methods, a find-my-way path (`/a/:param`, `/a/*`), its handler. */
export interface LocalRoute {
  methods: readonly string[];
  path: string;
  handler: LocalHandler;
}

/** The REST API a listener emulates: its routes, how a matched one is served, and API Gateway's answer to the rest. */
export interface ApiRoutes {
  routes: readonly Route[];
  serve(route: Route, req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void>;
  missing(req: IncomingMessage, res: ServerResponse, requestId: string): void | Promise<void>;
}

export interface ListenerRouter {
  /** Answers one request from the table. */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void>;
}

type Target = { kind: 'api'; route: Route } | { kind: 'local'; route: LocalRoute };

export function listenerRouter(api: ApiRoutes, local: readonly LocalRoute[] = []): ListenerRouter {
  const router = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false });
  const noop = (): void => undefined;
  for (const route of api.routes) router.on(route.method as HTTPMethod, route.resource, noop, { kind: 'api', route } satisfies Target);
  for (const route of local) router.on(route.methods as HTTPMethod[], route.path, noop, { kind: 'local', route } satisfies Target);

  /** The methods the stack's own routes serve at `path`: the `Allow` of a 405. */
  const localMethods = (path: string): string[] =>
    METHODS.filter((method) => (router.find(method as HTTPMethod, path)?.store as Target | undefined)?.kind === 'local');

  return {
    async handle(req, res, requestId) {
      const path = pathOf(req);
      const found = router.find((req.method ?? 'GET').toUpperCase() as HTTPMethod, path);
      const target = found?.store as Target | undefined;
      if (target?.kind === 'api') return api.serve(target.route, req, res, requestId);
      if (target?.kind === 'local') return target.route.handler(req, res, requestId, found?.params ?? {});
      const allow = localMethods(path);
      if (allow.length > 0) throw new LocalRefusal(405, 'This method is not served here.', { Allow: allow.join(', ') });
      return api.missing(req, res, requestId);
    },
  };
}
