import { join } from 'node:path';
import { FUNCTIONS, type FunctionName, ROOT } from '../infra/build.js';
import { resolveLocalValue } from './lambda/function-specs.js';
import type { TransferMode } from './lambda/proxy-integration.js';
import type { PublicApiAnswers } from './public-api-answers.js';
import { DOOR_PATHS } from './settings.js';
import { readTemplateSource, type YamlValue } from './template-sources.js';

/**
 * The REST APIs' routes, for both listeners: method and resource to the deployed function, the
 * token authorizer that guards it (or none), whether it takes an API key (from the authorizer:
 * per-tenant throttling), and how its answer is sent; or to API Gateway's own static answer (a
 * MOCK integration). Read from the template's own sources, never a second list that could drift:
 * the public API from serverless.yml's `http` events (their authorizer's identity source and
 * cache, `private: true` for an API key) and the static answers the template is given
 * (staticRoutes, from the stage's answers), the private one from the methods of infra/private-api.yml. Each listener's router (local/listener-router.ts) matches them, exactly as
 * API Gateway matches a REST resource without path parameters; test/infra/template-public-api.test.ts
 * proves the packaged template has the same.
 */

/** The deployed functions the routes reach (infra/build.ts FUNCTIONS has their entry modules). */
export type RouteFunction = Exclude<FunctionName, 'authorizer'>;

/** A REQUEST authorizer in front of a route, as serverless.yml declares it. */
export interface RouteAuthorizer {
  /** Its name in the template (one API Gateway authorizer per door). */
  name: string;
  /** The request header API Gateway caches its answer by; null: no cache, invoked for every request. */
  identitySource: string | null;
  /** How long API Gateway keeps an answer (0 without an identity source). */
  ttlSeconds: number;
}

interface RouteBase {
  /** The public REST API, or the private one (the broker's VPC endpoint; locally the loopback listener). */
  api: 'public' | 'private';
  method: string;
  resource: string;
  authorizer: RouteAuthorizer | null;
  /** The method takes an API key (`ApiKeyRequired`), from the authorizer's usage identifier: its requests count against that key's throttle. */
  apiKeyRequired?: boolean;
}

/** A route to a deployed function (a Lambda proxy integration). */
export interface FunctionRoute extends RouteBase {
  mock?: false;
  function: RouteFunction;
  transferMode: TransferMode;
}

/** A route API Gateway answers itself (a MOCK integration, infra/static-answers.ts). */
export interface MockRoute extends RouteBase {
  mock: true;
}

export type Route = FunctionRoute | MockRoute;

interface HttpEvent {
  method: string;
  path: string;
  authorizer?: { name: string; identitySource?: string; resultTtlInSeconds?: number };
  private?: boolean;
  response?: { transferMode?: TransferMode };
}

/** `method.request.header.Authorization` → `Authorization`. */
function headerOf(identitySource: string | undefined): string | null {
  if (identitySource === undefined) return null;
  const header = /^method\.request\.header\.([A-Za-z0-9-]+)$/.exec(identitySource)?.[1];
  if (!header) throw new Error(`serverless.yml: an identity source the local gateway does not read: ${identitySource}`);
  return header;
}

/** The public API: every deployed function's `http` events in serverless.yml. */
function publicRoutes(file: string): Route[] {
  const doc = readTemplateSource<{ functions: Record<string, { events?: Array<{ http?: HttpEvent }> }> }>(file);
  return (Object.keys(FUNCTIONS) as FunctionName[]).flatMap((name) =>
    (doc.functions[name]?.events ?? []).flatMap(({ http }): Route[] => {
      if (!http) return [];
      if (name === 'authorizer') throw new Error('serverless.yml: the authorizer function has no route of its own');
      const authorizer = http.authorizer;
      const identitySource = headerOf(authorizer?.identitySource);
      return [
        {
          api: 'public',
          method: http.method.toUpperCase(),
          resource: http.path.startsWith('/') ? http.path : `/${http.path}`,
          function: name,
          authorizer: authorizer
            ? { name: authorizer.name, identitySource, ttlSeconds: identitySource ? (authorizer.resultTtlInSeconds ?? 300) : 0 }
            : null,
          apiKeyRequired: http.private === true,
          transferMode: http.response?.transferMode ?? 'BUFFERED',
        },
      ];
    }),
  );
}

/**
 * The public API's routes API Gateway answers itself (MOCK methods, which `npm run package` adds to
 * the template from infra/static-answers.ts): the ones the stage's answers hold (local/public-api-answers.ts).
 */
export function staticRoutes(answers: PublicApiAnswers): Route[] {
  return answers.staticAnswers.map(({ path, method }) => ({
    api: 'public',
    method: method.HttpMethod,
    resource: path,
    authorizer: null,
    mock: true,
  }));
}

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** The private API: the methods of infra/private-api.yml, each path walked up its resources. */
function privateRoutes(file: string): Route[] {
  const resources = readTemplateSource<{ Resources: Resources }>(file).Resources;
  const pathOf = (ref: unknown): string => {
    const id = (ref as { Ref?: string } | undefined)?.Ref;
    const parent = id ? resources[id] : undefined;
    return parent ? `${pathOf(parent.Properties.ParentId)}/${String(parent.Properties.PathPart)}` : '';
  };
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGateway::Method')
    .map(({ Properties: p }): Route => {
      const uri = JSON.stringify((p.Integration as { Uri?: unknown } | undefined)?.Uri);
      const fn = (Object.keys(FUNCTIONS) as FunctionName[]).find(
        (name) => name !== 'authorizer' && uri.includes(`\${${name[0]?.toUpperCase()}${name.slice(1)}LambdaFunction.Arn}`),
      );
      if (!fn || fn === 'authorizer') throw new Error(`infra/private-api.yml: a method whose integration is no deployed function: ${uri}`);
      return {
        api: 'private',
        method: String(p.HttpMethod),
        resource: pathOf(p.ResourceId),
        function: fn,
        authorizer: null,
        transferMode: 'BUFFERED',
      };
    });
}

/** Both REST APIs' routes to the deployed functions, as the template's sources declare them. */
function readRoutes(): readonly Route[] {
  const routes = [...publicRoutes(join(ROOT, 'serverless.yml')), ...privateRoutes(join(ROOT, 'infra', 'private-api.yml'))];
  const doors = new Set(Object.values(DOOR_PATHS) as string[]);
  const unknown = routes.find((r) => r.authorizer && !doors.has(r.resource));
  if (unknown) throw new Error(`serverless.yml guards ${unknown.resource}, a door the local issuer signs no tokens for (DOOR_PATHS)`);
  return Object.freeze(routes);
}

/** The routes to the deployed functions; the static ones come with the stage's answers (staticRoutes). */
export const ROUTES: readonly Route[] = readRoutes();

/** A usage plan's throttle: each API key's token bucket, refilled at `rateLimit` per second, holding at most `burstLimit`. */
export interface UsageThrottle {
  rateLimit: number;
  burstLimit: number;
}

/** The tenants' default usage plan (infra/usage-plan.yml), its rate and burst as the stage's parameters give them. */
function readTenantThrottle(): UsageThrottle {
  const plan = readTemplateSource<{ Resources: { TenantUsagePlan: { Properties: { Throttle: Record<string, YamlValue> } } } }>(
    join(ROOT, 'infra', 'usage-plan.yml'),
  ).Resources.TenantUsagePlan.Properties.Throttle;
  const number = (name: string): number => {
    const value = Number(resolveLocalValue(plan[name] ?? null));
    if (!(value >= 0)) throw new Error(`infra/usage-plan.yml: the tenants' plan has no ${name} the local stage can read`);
    return value;
  };
  return Object.freeze({ rateLimit: number('RateLimit'), burstLimit: number('BurstLimit') });
}

export const TENANT_THROTTLE: UsageThrottle = readTenantThrottle();
