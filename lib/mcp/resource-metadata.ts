import { DOORS, type DoorName, doorResource } from '../auth/public-doors.js';
import type { Settings } from '../config.js';

/**
 * Where the protected resource metadata (RFC 9728) of each public door is served: the MCP door's
 * at its well-known URI (§3.1) and at the root, where MCP clients look next; the inventory's at its
 * own. Every 401 of a door points at its document (`resource_metadata`, lib/auth/challenge.ts).
 */
const METADATA_DOORS: Readonly<Record<string, DoorName>> = Object.freeze({
  [DOORS.mcp.metadataPath]: 'mcp',
  '/.well-known/oauth-protected-resource': 'mcp',
  [DOORS.inventory.metadataPath]: 'inventory',
});

export const RESOURCE_METADATA_PATHS = Object.freeze(Object.keys(METADATA_DOORS));

/** The door whose metadata a path serves, if it is one of RESOURCE_METADATA_PATHS. */
export function metadataDoorOf(path: string): DoorName | undefined {
  return Object.hasOwn(METADATA_DOORS, path) ? METADATA_DOORS[path] : undefined;
}

/**
 * The RFC 9728 metadata of a door's protected resource: `resource` is the door's identifier
 * (lib/auth/public-doors.ts doorResource: the URL clients call, which is what they send as the RFC 8707
 * `resource`), the issuer its one authorization server, `scopes_supported` the door's one scope
 * (when one is required). Public, the same for everyone, served
 * without an authorizer and without a function.
 */
function protectedResourceMetadata(
  cfg: Pick<Settings, 'mcpAudience' | 'jwtIssuer' | 'publicUrl' | 'requiredScope'>,
  door: DoorName = 'mcp',
): Record<string, unknown> {
  return {
    resource: doorResource(cfg, door),
    authorization_servers: [cfg.jwtIssuer],
    // The one scope the door asks for (lib/auth/scopes.ts): MCP clients ask for what this lists.
    ...(cfg.requiredScope !== undefined ? { scopes_supported: [cfg.requiredScope] } : {}),
    bearer_methods_supported: ['header'],
    resource_name: door === 'mcp' ? 'Endpoint read service (MCP)' : 'Endpoint read service (inventory)',
  };
}

/** The headers of a metadata document: public and the same for everyone, so it may be kept an hour. */
export const METADATA_HEADERS = Object.freeze({
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'public, max-age=3600',
});

/**
 * The body of a door's metadata document, exactly as it is served: API Gateway answers it itself
 * (a MOCK integration made at package time from this, infra/static-answers.ts), so no function runs
 * for it; a browser page reads it from an admitted origin (lib/mcp/cors.ts).
 */
export function metadataDocument(cfg: Pick<Settings, 'mcpAudience' | 'jwtIssuer' | 'publicUrl' | 'requiredScope'>, door: DoorName): string {
  return JSON.stringify(protectedResourceMetadata(cfg, door));
}
