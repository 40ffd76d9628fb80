import type { Settings } from '../config.js';

/**
 * The two public doors of the REST API and what each one's token authorizer must know: the
 * resource it guards, the audience of its tokens, where its RFC 9728 document is, and how its
 * refusals reach the client. The template (serverless.yml) and the local gateway follow this
 * table; test/infra/template-public-api.test.ts proves that they agree.
 *
 * Why the doors refuse differently: API Gateway's gateway responses are one per type for the whole
 * API, and their headers are static (or copied from the request), so a 401's `WWW-Authenticate`
 * cannot name the RFC 9728 document of the door that was asked unless each door's refusals use a
 * type of their own (docs/decisions.md, "One 401 per door"):
 * - the MCP door's authorizer refuses with the error `Unauthorized` (gateway response
 *   UNAUTHORIZED). Its identity source is the `Authorization` header, so a request without one is
 *   refused by API Gateway itself with the same type, and its answers are cached per token;
 * - the inventory door's authorizer has no identity source, so it is invoked for every request
 *   (a missing header included, uncached), and refuses with an explicit Deny (gateway response
 *   ACCESS_DENIED, answered as a 401 whose body carries the authorizer's own sentence).
 */

export type DoorName = 'inventory' | 'mcp';

export interface Door {
  name: DoorName;
  /** The REST API resource the door's authorizer guards. */
  resource: string;
  /** Its methods behind the authorizer (an OPTIONS preflight has none). */
  methods: readonly string[];
  /** Name of its authorizer in the template (`AWS::ApiGateway::Authorizer` Name). */
  authorizerName: string;
  /** Where the RFC 9728 metadata of this protected resource is served, under the public URL. */
  metadataPath: string;
  /** How the authorizer refuses: a Deny policy (ACCESS_DENIED) or the error `Unauthorized` (UNAUTHORIZED). */
  refusal: 'deny' | 'unauthorized';
  /** The request header API Gateway caches the authorizer's answer by; null: no cache, always invoked. */
  identitySource: 'Authorization' | null;
  /** How long API Gateway keeps an answer (0 without an identity source). */
  cacheTtlSeconds: number;
}

export const DOORS: Readonly<Record<DoorName, Door>> = Object.freeze({
  inventory: Object.freeze({
    name: 'inventory',
    resource: '/api/agents',
    methods: Object.freeze(['GET']),
    authorizerName: 'inventoryAuthorizer',
    metadataPath: '/.well-known/oauth-protected-resource/api/agents',
    refusal: 'deny',
    identitySource: null,
    cacheTtlSeconds: 0,
  }),
  mcp: Object.freeze({
    name: 'mcp',
    resource: '/api/mcp',
    methods: Object.freeze(['POST', 'GET', 'DELETE']),
    authorizerName: 'mcpAuthorizer',
    metadataPath: '/.well-known/oauth-protected-resource/api/mcp',
    refusal: 'unauthorized',
    identitySource: 'Authorization',
    cacheTtlSeconds: 300,
  }),
} satisfies Record<DoorName, Door>);

/** The door whose authorizer guards a REST resource, if any. */
export function doorOfResource(resource: string | undefined): Door | undefined {
  return Object.values(DOORS).find((door) => door.resource === resource);
}

/** The audience a token must carry at this door (`aud`, or else `client_id`). */
export function doorAudience(cfg: Pick<Settings, 'jwtAudience' | 'mcpAudience'>, door: DoorName): string {
  return door === 'mcp' ? cfg.mcpAudience : cfg.jwtAudience;
}

/**
 * The door's resource identifier (RFC 8707, RFC 9728 `resource`): the URL clients call, as its
 * RFC 9728 document names it and clients send it as `resource` when they ask for a token. For the
 * MCP door it is the audience of its tokens (MCP_AUDIENCE); the inventory's tokens carry
 * JWT_AUDIENCE, so an authorization server maps this identifier to that audience.
 */
export function doorResource(cfg: Pick<Settings, 'mcpAudience' | 'publicUrl'>, door: DoorName): string {
  return door === 'mcp' ? cfg.mcpAudience : `${cfg.publicUrl}${DOORS.inventory.resource}`;
}

/** The absolute URL of the door's RFC 9728 document, as the `resource_metadata` of its 401s names it. */
export function resourceMetadataUrl(cfg: Pick<Settings, 'publicUrl'>, door: DoorName): string {
  return `${cfg.publicUrl}${DOORS[door].metadataPath}`;
}
