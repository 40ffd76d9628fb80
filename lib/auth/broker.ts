import { httpError } from '../errors.js';
import { INSUFFICIENT_SCOPE } from './scopes.js';

/**
 * The broker of a brokered observations read is named by the token it sends, not by IAM: the
 * token comes from an RFC 8693 token exchange at the issuer, and the issuer writes the exchanging
 * client into it (the actor, `act.sub`, RFC 8693 §4.1; or `azp` for an on-behalf-of flow). A
 * user's own token passed through carries no actor, or another audience, and is refused (403).
 */

/** Sentences (or how they begin) the observations operation answers with; the MCP door recognises them as its own misconfiguration. */
export const BROKER_REFUSALS = Object.freeze({
  /** The exchanged token lacks the operation's scope: the broker did not ask for it, or the issuer did not grant it. */
  scope: INSUFFICIENT_SCOPE,
  missing: 'The token names no broker: the observations operation accepts only a token a broker obtained by token exchange.',
  notAllowed: 'The broker named by the token is not allowed to call this operation.',
  passthrough:
    "The token was made for another service: a user's own token passed through is never accepted here, only a broker's token for this operation obtained by token exchange.",
});

/**
 * The value of a claim given by name or dotted path (`act.sub`), when it is a non-empty string.
 * A path walks nested objects only; anything else (an array, a number, a missing step) is undefined.
 */
export function claimAt(claims: Record<string, unknown>, path: string): string | undefined {
  let value: unknown = claims;
  for (const step of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, step)) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The broker named by verified claims, or null when the token names none. */
export function brokerOf(claims: Record<string, unknown>, claimPath: string): string | null {
  return claimAt(claims, claimPath) ?? null;
}

/**
 * Checks the broker named by the token against the allow-list (exact client ids). No broker (a
 * passed-through user token) and a broker not on the list are both 403s, with different sentences.
 */
export function assertAllowedBroker(broker: string | null, allowList: readonly string[]): string {
  if (broker === null) throw httpError(403, BROKER_REFUSALS.missing);
  if (!allowList.includes(broker)) throw httpError(403, BROKER_REFUSALS.notAllowed);
  return broker;
}
