/**
 * The names of the doors' OAuth scopes (lib/auth/scopes.ts says how they are asked and checked):
 * a module of its own, with no side effects, so the configuration and the OpenAPI document name
 * them from one place.
 */

/** The OAuth scope each public door asks for unless REQUIRED_SCOPE names another. */
export const DEFAULT_REQUIRED_SCOPE = 'endpoints:read';
/** The scope of the private observations operation, which the broker asks for in its token exchange whenever the doors ask for theirs. */
export const OBSERVATIONS_SCOPE = 'observations:read';

/** One RFC 6749 §3.3 scope-token: printable ASCII but space, `"` and `\` (%x21 / %x23-5B / %x5D-7E), at least one. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
