import type { Config } from '../config.js';

/** Where MCP clients look for the protected resource metadata of `/api/mcp` (RFC 9728 §3.1, then the root). */
export const RESOURCE_METADATA_PATHS = Object.freeze(['/.well-known/oauth-protected-resource/api/mcp', '/.well-known/oauth-protected-resource']);

/**
 * The RFC 9728 metadata of the MCP resource: `resource` is exactly the audience tokens for it carry
 * (`MCP_AUDIENCE`), and the issuer is its one authorization server. Public, the same for everyone.
 * On AWS the JWT authorizer's 401 cannot point at this document (`resource_metadata`), so the
 * well-known URIs are how clients find it.
 */
export function protectedResourceMetadata(cfg: Pick<Config, 'mcpAudience' | 'jwtIssuer'>): Record<string, unknown> {
  return {
    resource: cfg.mcpAudience,
    authorization_servers: [cfg.jwtIssuer],
    bearer_methods_supported: ['header'],
    resource_name: 'Endpoint read service (MCP)',
  };
}

/**
 * Where the metadata of `resource` is, as RFC 9728 §3.1 builds it: the well-known path inserted
 * between the host and the resource's path (`https://h/api/mcp` → `https://h/.well-known/oauth-protected-resource/api/mcp`).
 * A resource that is not a URL gets no location (undefined).
 */
export function resourceMetadataUrl(resource: string): string | undefined {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return undefined;
  }
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}/.well-known/oauth-protected-resource${path}`;
}
