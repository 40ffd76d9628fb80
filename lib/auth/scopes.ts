/**
 * The OAuth scopes the doors ask for (MCP authorization 2025-11-25, RFC 6750 §3.1): each door
 * names one, and a token verified in every other respect but without it is a 403 whose challenge
 * says `error="insufficient_scope"` and the scope, so a client can ask for it (step-up).
 * - the public doors (inventory and MCP): REQUIRED_SCOPE (lib/config.ts), `endpoints:read` by default; empty for
 *   an identity provider that issues no scope for these audiences (then none is asked or checked);
 * - the private observations operation: OBSERVATIONS_SCOPE, which the broker asks for in its token
 *   exchange, required whenever the public doors require theirs.
 * The granted scopes are read from SCOPE_CLAIM when set, else from `scope` (RFC 8693 §4.2, RFC 9068:
 * one string, space-separated), else from `scp` (Entra ID and others: a string or an array).
 */

/** The scopes a verified token was granted; none when the claim is absent or of another shape. */
export function grantedScopes(claims: Record<string, unknown>, claim?: string): string[] {
  const value = claim !== undefined ? claims[claim] : (claims.scope ?? claims.scp);
  if (typeof value === 'string') return value.split(/\s+/).filter((scope) => scope !== '');
  if (Array.isArray(value)) return value.filter((scope): scope is string => typeof scope === 'string' && scope !== '');
  return [];
}

/** Whether verified claims grant `required`; always true when none is required. */
export function hasScope(claims: Record<string, unknown>, required: string | undefined, claim?: string): boolean {
  return required === undefined || grantedScopes(claims, claim).includes(required);
}

/** How every insufficient-scope sentence begins (the MCP broker recognises the private operation's). */
export const INSUFFICIENT_SCOPE = 'The bearer token was not granted the scope';
