/**
 * The names of endpoint groups: what a durable record's `groups` may hold (docs/data-format.md)
 * and what a token's endpoint scope claim may name (lib/auth/endpoint-scope.ts judges the claim
 * with this same rule, so a producer and the service agree on what a group name is).
 */

/** The bound on one group name, in characters (code points). */
export const MAX_GROUP_NAME_CHARACTERS = 128;

/** The name that means every group (in a scope claim; never a group of its own on a record). */
export const ALL_GROUPS = '*';

/** 1 to MAX_GROUP_NAME_CHARACTERS characters, counted as code points (a surrogate pair is one). */
export function isGroupName(value: unknown): value is string {
  if (typeof value !== 'string' || value === '') return false;
  return value.length <= MAX_GROUP_NAME_CHARACTERS || [...value].length <= MAX_GROUP_NAME_CHARACTERS;
}
