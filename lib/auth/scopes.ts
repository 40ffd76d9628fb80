import { SCOPE_TOKEN } from '../scope-names.js';

/**
 * The OAuth scopes the doors ask for (MCP authorization 2025-11-25, RFC 6750 §3.1): each door
 * names one, and a token verified in every other respect but without it is a 403 whose challenge
 * says `error="insufficient_scope"` and the scope, so a client can ask for it (step-up).
 * - the public doors (inventory and MCP): REQUIRED_SCOPE (lib/config.ts), `endpoints:read` by default; empty for
 *   an identity provider that issues no scope for these audiences (then none is asked or checked);
 * - the private observations operation: OBSERVATIONS_SCOPE, which the broker asks for in its token
 *   exchange, required whenever the public doors require theirs.
 * The granted scopes are read from SCOPE_CLAIM when set, else from `scope`, else from `scp`:
 * - `scope` is RFC 6749 §3.3's scope string (RFC 8693 §4.2, RFC 9068 §2.2.3): scope tokens
 *   separated by single spaces (U+0020) and nothing else, so a tab or a no-break space separates
 *   nothing (the token holding one is no scope token, and grants nothing). A `scope` that is not a
 *   string (a JSON array) is not a scope string: the token was granted no scope, and a door asking
 *   for one answers 403 `insufficient_scope`, as for a token without the claim;
 * - `scp` (Entra ID, Okta and others) keeps both of its forms: one string, split the same way, or
 *   an array of scope tokens; so does any other claim SCOPE_CLAIM names;
 * - only RFC 6749 scope tokens (printable ASCII, no space, `"` or `\`) count, so what is handed
 *   on space-separated (the authorizer's context) reads back the same.
 */

/** The values that are RFC 6749 scope tokens, the others left out. */
const scopeTokens = (values: readonly unknown[]): string[] =>
  values.filter((scope): scope is string => typeof scope === 'string' && SCOPE_TOKEN.test(scope));

/** The scopes a verified token was granted; none when the claim is absent or of another shape. */
export function grantedScopes(claims: Record<string, unknown>, claim?: string): string[] {
  const name = claim ?? ('scope' in claims ? 'scope' : 'scp');
  const value = claims[name];
  if (typeof value === 'string') return scopeTokens(value.split(' '));
  // RFC 6749's `scope` is a string; the array form is `scp`'s (and a named claim's) alone.
  if (Array.isArray(value) && name !== 'scope') return scopeTokens(value);
  return [];
}

/** Whether verified claims grant `required`; always true when none is required. */
export function hasScope(claims: Record<string, unknown>, required: string | undefined, claim?: string): boolean {
  return required === undefined || grantedScopes(claims, claim).includes(required);
}

/** How every insufficient-scope sentence begins (the MCP broker recognises the private operation's). */
export const INSUFFICIENT_SCOPE = 'The bearer token was not granted the scope';
