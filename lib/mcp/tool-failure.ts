import { logger } from '../observability/logger.js';
import { recordBrokerMisconfiguration } from '../observability/metrics.js';
import { quoted } from './reported-text.js';

/**
 * A tool call that cannot give its result: the one sentence the user (or model) reads in an
 * `isError` result. Sentences are fixed or come from the service's own failure texts; a raw
 * gateway body, an ARN, a token or an exception message never reaches one.
 */
export class ToolFailure extends Error {
  override name = 'ToolFailure';
}

/** Seconds a client should wait before it retries, from `Retry-After` (default 5). */
export function retryAfterSeconds(header: string | null | undefined, fallback = 5): number {
  const n = header ? Number(header) : Number.NaN;
  return Number.isInteger(n) && n >= 0 && n <= 3600 ? n : fallback;
}

export const TOOL_SENTENCES = Object.freeze({
  notFound: (agentId: string) =>
    `No endpoint with agent_id ${quoted(agentId, 128)} is visible to you; list_endpoints shows the endpoints you can read.`,
  ticketRequired: (ticketSystem: string) =>
    `This tenant requires a ticket for every read: call observations again with the ticket argument, an object with its two fields number (your ticket number, e.g. INC0012345) and system "${ticketSystem}".`,
  unavailable: (what: string, seconds: number) => `The ${what} is unavailable right now; try again in ${seconds} s.`,
  timedOut: (what: string, seconds: number) => `The ${what} did not answer in time; try again in ${seconds} s.`,
  busy: (what: string, seconds: number) => `The ${what} is busy; try again in ${seconds} s.`,
  failed: (what: string) => `The ${what} failed to answer; try again later.`,
  unreadable: (what: string) => `The ${what} answered with data that could not be read; try again later.`,
  misconfigured:
    'The MCP service is not set up correctly to read observations for you (a configuration problem on our side, not in your request); tell the operator.',
  signInAgain: 'Your sign-in could not be exchanged for access to observations; sign in again, then retry.',
  internal: 'The tool failed because of an internal error; try again later.',
});

/**
 * A refusal that means the MCP service itself is misconfigured (the observations service did not
 * accept its token or its broker identity, or the issuer refused its client): logged at error level
 * and counted, since no user can fix it, then answered with the sentence given.
 */
export function misconfiguration(sentence: string, details: Record<string, unknown>): ToolFailure {
  logger.error('broker misconfiguration', details);
  recordBrokerMisconfiguration();
  return new ToolFailure(sentence);
}
