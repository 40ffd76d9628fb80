import { ALL_GROUPS, isGroupName, MAX_GROUP_NAME_CHARACTERS } from '../data-format/group-names.js';
import { httpError } from '../errors.js';

/**
 * The endpoint scope: the boundary below the tenant. A token may carry the claim named by
 * `ENDPOINT_SCOPE_CLAIM` (default `endpoint_groups`) listing the endpoint groups its account may
 * see; an endpoint record carries its groups (`groups` on the durable record). Pure: no I/O, no
 * configuration read, so the authorizer, the handlers, the reader and the private operation judge
 * a claim with the same rules (docs/design.md §5, "The endpoint scope").
 *
 * The claim's forms:
 * - absent: no scope given: the whole tenant, unless the tenant's policy says `"scope": "required"`;
 * - `"*"`, or `*` among the names: every endpoint of the tenant;
 * - a JSON array of group names, or one string of names separated by spaces (as some issuers write
 *   multi-valued claims): the endpoints in at least one of those groups.
 * Anything else (another type, an array with a non-string, no name at all, a name that is no group
 * name: lib/data-format/group-names.ts) is a bad claim: a 403 naming the claim, never a guess.
 */

export type EndpointScope =
  /** The token carries no scope claim. */
  | { readonly kind: 'unscoped' }
  /** The claim says `*`. */
  | { readonly kind: 'all' }
  /** The claim names these groups (never empty). */
  | { readonly kind: 'groups'; readonly groups: ReadonlySet<string> };

export const UNSCOPED: EndpointScope = Object.freeze({ kind: 'unscoped' });
export const ALL_ENDPOINTS: EndpointScope = Object.freeze({ kind: 'all' });

/** A scope of these groups (or every endpoint when `*` is among them); at least one name. */
export function groupsScope(groups: Iterable<string>): EndpointScope {
  const set = new Set(groups);
  if (set.size === 0) throw new TypeError('a groups scope needs at least one group');
  return set.has(ALL_GROUPS) ? ALL_ENDPOINTS : Object.freeze({ kind: 'groups', groups: set });
}

/** The one sentence of a bad scope claim (403), at every door and at the private operation. */
export function badScopeClaimSentence(claim: string): string {
  return `The token's "${claim}" claim must be "${ALL_GROUPS}" or endpoint group names: a list of strings, or one string of names separated by spaces, each 1 to ${MAX_GROUP_NAME_CHARACTERS} characters.`;
}

/** The one sentence of a token without the claim at a tenant whose policy requires a scope (403). */
export function scopeRequiredSentence(claim: string): string {
  return `This tenant requires an endpoint scope: the token must carry the "${claim}" claim.`;
}

/**
 * A scope claim's value as a scope, or `'invalid'`. `undefined` (no claim) is unscoped; a string
 * is split at spaces; an array must hold only strings. Every name must be a group name
 * (isGroupName), and at least one must be given.
 */
export function readScopeClaim(value: unknown): EndpointScope | 'invalid' {
  if (value === undefined) return UNSCOPED;
  let names: unknown[];
  if (typeof value === 'string') names = value.split(' ').filter((name) => name !== '');
  else if (Array.isArray(value)) names = value;
  else return 'invalid';
  if (names.length === 0 || !names.every(isGroupName)) return 'invalid';
  return groupsScope(names as string[]);
}

/**
 * True when a caller of this scope may see an endpoint with these groups: an unscoped or `*`
 * caller sees every endpoint; a scoped caller only endpoints sharing at least one group with it,
 * so an endpoint without groups (a connection record alone, a durable record without `groups`) is
 * visible only to unscoped and `*` callers.
 */
export function scopeAdmits(scope: EndpointScope, groups: readonly string[] | undefined): boolean {
  if (scope.kind !== 'groups') return true;
  if (groups === undefined) return false;
  for (const group of groups) if (scope.groups.has(group)) return true;
  return false;
}

/**
 * Refuses an unscoped caller at a tenant whose policy requires a scope (403 naming the claim).
 * A scoped caller passes whatever the policy says.
 */
export function assertScopeAllowed(scope: EndpointScope, policy: { scope?: 'optional' | 'required' | undefined }, claim: string): void {
  if (scope.kind === 'unscoped' && policy.scope === 'required') throw httpError(403, scopeRequiredSentence(claim));
}

/**
 * The scope's string form in a token authorizer's context (API Gateway allows no arrays there),
 * or undefined for an unscoped caller, whose context carries no `scope` at all: `*`, the group
 * names as a JSON array (sorted), or `invalid` for a bad claim, which the handler refuses.
 */
export function scopeContextValue(scope: EndpointScope | 'invalid'): string | undefined {
  if (scope === 'invalid') return 'invalid';
  if (scope.kind === 'unscoped') return undefined;
  if (scope.kind === 'all') return ALL_GROUPS;
  return JSON.stringify([...scope.groups].sort());
}

/**
 * The scope back from its context form (scopeContextValue), judged again with the claim's rules:
 * absent is unscoped; anything that is not `*` or a JSON array of group names is `'invalid'`.
 */
export function scopeFromContextValue(value: unknown): EndpointScope | 'invalid' {
  if (value === undefined || value === null) return UNSCOPED;
  if (value === ALL_GROUPS) return ALL_ENDPOINTS;
  if (typeof value !== 'string' || !value.startsWith('[')) return 'invalid';
  let names: unknown;
  try {
    names = JSON.parse(value);
  } catch {
    return 'invalid';
  }
  return Array.isArray(names) ? readScopeClaim(names) : 'invalid';
}

/**
 * The scope as an audit item records it: `null` (no claim: the whole tenant), `"*"`, the group
 * names (sorted), or `"invalid"` for a refused claim.
 */
export function auditedScope(scope: EndpointScope | 'invalid'): string | string[] | null {
  if (scope === 'invalid') return 'invalid';
  if (scope.kind === 'unscoped') return null;
  if (scope.kind === 'all') return ALL_GROUPS;
  return [...scope.groups].sort();
}

/** True when two scopes let a caller see the same endpoints under the same policy. */
export function sameScope(a: EndpointScope | 'invalid', b: EndpointScope | 'invalid'): boolean {
  return JSON.stringify(auditedScope(a)) === JSON.stringify(auditedScope(b));
}
