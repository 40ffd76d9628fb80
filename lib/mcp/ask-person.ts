import { createHash } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ElicitRequestFormParams,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type * as z from 'zod';
import { type AttributionSource, attributionSourcesOf, personRefusalSentence } from '../contract/attribution.js';
import {
  type observationsReason,
  type observationsTicket,
  type observationsToolInput,
  TICKET_NUMBER_RULE,
  type withRequiredReason,
} from '../contract/mcp-tools.js';
import { OBSERVATION_BOUNDS } from '../contract/schemas.js';
import type { BrokeredArgs } from './broker-hop.js';
import { quoted } from './reported-text.js';

/**
 * Asking the person for the attribution `observations` lacks (MCP 2026-07-28, multi round-trip
 * requests): when the reason, or a ticket the tenant's policy requires, is missing or breaks its
 * rule, the tool answers `input_required` with one elicitation form for what it needs, and the
 * client calls again with the same arguments and the person's answer. The answer is held to the
 * rules the arguments are held to; a bad one is asked again, at most MAX_ASK_ROUNDS forms in all;
 * a decline or a dismissed form reads nothing (and is put on record). Nothing is kept between the
 * rounds but the signed `requestState` the client echoes (lib/mcp/request-state.ts), and a retry
 * counts only when its state is one we minted for these very arguments.
 *
 * A client that cannot be asked (a 2025-era request, or no form elicitation among the capabilities
 * of the request's `_meta`) gets the tool's sentences as before.
 */

/** The most forms one call shows; after the last bad answer the call ends with one sentence. */
export const MAX_ASK_ROUNDS = 3;

/** The one form's key in `inputRequests` / `inputResponses`. */
const ATTRIBUTION_FORM = 'attribution';

type Field = 'reason' | 'ticket';

/** What the signed `requestState` carries from one round to the next (the client can read it: nothing it did not send or see). */
interface AskState {
  v: 1;
  /** The digest of the call's arguments: a retry with others is a new call. */
  args: string;
  /** The form this state went out with: 1 to MAX_ASK_ROUNDS. */
  round: number;
  /** What that form asked. */
  asked: Field[];
  /** Whether the tenant's policy required a ticket when the first form was made. */
  ticketRequired: boolean;
  /** What the person already answered by the rules, in earlier forms (`ticket: null`: no ticket, where none is required). */
  given: { reason?: string; ticket?: string | null };
}

/** What the tool does with one call. */
export type AttributionRound =
  /** Refuse with one sentence; nothing is read or recorded (an argument the person cannot fix, a client that cannot be asked, answers that never followed the rules). */
  | { kind: 'refuse'; sentence: string }
  /** Ask the person: the `input_required` result. */
  | { kind: 'ask'; result: InputRequiredResult; asked: Field[]; round: number }
  /** The person declined or dismissed the form: put it on record (nothing is read), and answer the sentence. */
  | { kind: 'refused-by-person'; args: BrokeredArgs; sentence: string }
  /** Read, with these arguments and their sources. */
  | { kind: 'read'; args: BrokeredArgs };

/** What the round needs from the tool around it. */
export interface AttributionRules {
  /** The advertised arguments (reason optional). */
  input: ReturnType<typeof observationsToolInput>;
  /** The same with the reason required: the arguments of a client that cannot be asked. */
  required: ReturnType<typeof withRequiredReason>;
  /** The argument rules a person's answer is held to. */
  reason: ReturnType<typeof observationsReason>;
  ticket: ReturnType<typeof observationsTicket>;
  ticketSystem: string;
  /** The tool's sentence for an argument that breaks its rule. */
  sentenceOf: (error: z.ZodError) => string;
  /** Whether the caller's tenant requires a ticket (its policy, read only when a ticket is missing or bad). */
  ticketRequired: () => Promise<boolean>;
  /** Signs the state of a form for this request. */
  mint: (state: AskState) => Promise<string>;
}

/**
 * Whether the request's client said it can show a form: a 2026-07-28 request carries its
 * capabilities in `_meta`; `elicitation: {}` means forms (the pre-mode meaning the SDK keeps), as
 * does `elicitation.form`. A 2025-era request carries none here: its elicitation needs a session
 * stream this stateless server does not hold.
 */
function canAskPerson(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: unknown } | undefined;
  const elicitation = capabilities?.elicitation;
  if (elicitation === null || typeof elicitation !== 'object' || Array.isArray(elicitation)) return false;
  const modes = elicitation as { form?: unknown; url?: unknown };
  return modes.form !== undefined || modes.url === undefined;
}

/** The arguments as the client sent them, in one canonical text (keys sorted), hashed: what a state is bound to. */
function argumentsDigest(raw: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
      );
    }
    return value;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(raw)))
    .digest('base64url');
}

function isAskState(value: unknown, digest: string): value is AskState {
  const state = value as Partial<AskState> | undefined;
  return (
    state?.v === 1 &&
    state.args === digest &&
    Number.isInteger(state.round) &&
    Array.isArray(state.asked) &&
    state.asked.length > 0 &&
    typeof state.ticketRequired === 'boolean' &&
    state.given !== null &&
    typeof state.given === 'object'
  );
}

type Ticket = { number: string; system: string };
/** A value checked by its rule: the value, or the problem in words for the person. */
type Checked<T> = { value: T; problem?: undefined } | { value?: undefined; problem: string };

const { reason: REASON_BOUNDS, ticketNumber: TICKET_BOUNDS } = OBSERVATION_BOUNDS;

/** `reason is too short: …` as the person reads it: `the reason is too short: …`. */
function reasonChecked(rules: AttributionRules, value: unknown): Checked<string> {
  const parsed = rules.reason.safeParse(value);
  return parsed.success ? { value: parsed.data } : { problem: `the ${parsed.error.issues[0]?.message ?? 'reason breaks its rule'}` };
}

/** A ticket by the argument's rule; undefined value: no ticket (nothing, or the system alone). */
function ticketChecked(rules: AttributionRules, value: unknown): Checked<Ticket | undefined> {
  const parsed = rules.ticket.safeParse(value);
  if (parsed.success) return { value: parsed.data };
  const ticket = value as { number?: unknown; system?: unknown } | undefined;
  if (ticket && typeof ticket === 'object' && ticket.system !== undefined && ticket.system !== rules.ticketSystem) {
    return { problem: `the ticket system must be "${rules.ticketSystem}"` };
  }
  const number = ticket && typeof ticket === 'object' ? ticket.number : undefined;
  const shown = typeof number === 'string' ? ` ${quoted(number, 40)}` : '';
  return { problem: `the ticket number${shown} does not follow its rule` };
}

/** The one form: the fields asked, with their bounds (the ticket number's pattern cannot travel in a form: it is in the message and the field's description). */
function formSchema(asked: readonly Field[], ticketRequired: boolean, ticketSystem: string): ElicitRequestFormParams['requestedSchema'] {
  const properties: ElicitRequestFormParams['requestedSchema']['properties'] = {};
  const required: string[] = [];
  if (asked.includes('ticket')) {
    properties.ticket_number = {
      type: 'string',
      title: 'Ticket number',
      description: `Your ${ticketSystem} ticket for this read, e.g. INC0012345: ${TICKET_NUMBER_RULE}.${ticketRequired ? '' : ' Leave it empty to read without a ticket.'}`,
      minLength: TICKET_BOUNDS.min,
      maxLength: TICKET_BOUNDS.max,
    };
    properties.ticket_system = {
      type: 'string',
      title: 'Ticket system',
      description: 'The one ticketing product this service takes.',
      oneOf: [{ const: ticketSystem, title: ticketSystem }],
      default: ticketSystem,
    };
    if (ticketRequired) required.push('ticket_number');
  }
  if (asked.includes('reason')) {
    properties.reason = {
      type: 'string',
      title: 'Reason',
      description: `Why the endpoint is read, in your words (${REASON_BOUNDS.min} to ${REASON_BOUNDS.max} characters). It is recorded in the tenant's audit trail.`,
      minLength: REASON_BOUNDS.min,
      maxLength: REASON_BOUNDS.max,
    };
    required.push('reason');
  }
  return { type: 'object', properties, required };
}

/**
 * What `observations` does with this call: read, ask the person, or refuse. `raw` is the call's
 * arguments as sent; `ctx` the SDK's request context, whose `requestState` the server's verify
 * hook has already checked (a forged or altered one never gets here).
 */
export async function attributionRound(raw: unknown, ctx: ServerContext, rules: AttributionRules): Promise<AttributionRound> {
  const input = raw ?? {};
  if (!canAskPerson(ctx)) {
    const parsed = rules.required.safeParse(input);
    if (!parsed.success) return { kind: 'refuse', sentence: rules.sentenceOf(parsed.error) };
    const { ticket } = parsed.data;
    return { kind: 'read', args: { ...parsed.data, sources: attributionSourcesOf('argument', ticket ? 'argument' : undefined) } };
  }
  // The arguments the person cannot be asked for follow their rules first, as for any client.
  const lenient = rules.input.safeParse({ ...(input as object), reason: undefined, ticket: undefined });
  if (!lenient.success) return { kind: 'refuse', sentence: rules.sentenceOf(lenient.error) };
  const { agent_id, minutes, limit } = lenient.data;
  const call: Call = {
    base: { agent_id, minutes, limit },
    reason:
      (input as { reason?: unknown }).reason === undefined
        ? { problem: 'missing' }
        : reasonChecked(rules, (input as { reason?: unknown }).reason),
    ticket: ticketChecked(rules, (input as { ticket?: unknown }).ticket),
    digest: argumentsDigest(input),
  };
  const state = ctx.mcpReq.requestState<unknown>();
  // Answers count only with a state we minted for these very arguments: answers without one were
  // never asked for, and a retry with other arguments is a new call (nothing carries over).
  if (isAskState(state, call.digest)) return nextRound(call, state, ctx, rules);
  return firstRound(call, rules);
}

interface Call {
  base: Pick<BrokeredArgs, 'agent_id' | 'minutes' | 'limit'>;
  /** The reason argument; problem `missing` when there is none. */
  reason: Checked<string>;
  ticket: Checked<Ticket | undefined>;
  digest: string;
}

async function firstRound(call: Call, rules: AttributionRules): Promise<AttributionRound> {
  const ticketRequired = call.ticket.value === undefined ? await rules.ticketRequired() : false;
  const asked: Field[] = [];
  if (call.ticket.problem !== undefined || (call.ticket.value === undefined && ticketRequired)) asked.push('ticket');
  if (call.reason.problem !== undefined) asked.push('reason');
  if (asked.length === 0) {
    const ticket = call.ticket.value;
    return {
      kind: 'read',
      args: { ...call.base, reason: call.reason.value, ticket, sources: attributionSourcesOf('argument', ticket ? 'argument' : undefined) },
    };
  }
  const state: AskState = { v: 1, args: call.digest, round: 1, asked, ticketRequired, given: {} };
  return ask(state, firstMessage(call, asked, ticketRequired), rules);
}

/** Why the person is asked, in one sentence (the tenant's policy, the endpoint, the reason given), then the ticket number's rule. */
function firstMessage(call: Call, asked: readonly Field[], ticketRequired: boolean): string {
  const why: string[] = [];
  if (asked.includes('ticket')) {
    why.push(
      call.ticket.problem === undefined
        ? "this tenant's policy requires a ticket, and the assistant gave none"
        : `the assistant gave a ticket that will not do (${call.ticket.problem}), and ${ticketRequired ? "this tenant's policy requires one" : 'this tenant does not require one: leave it empty to read without'}`,
    );
  }
  if (asked.includes('reason')) {
    why.push(
      call.reason.problem === 'missing'
        ? "each read is recorded in the tenant's audit trail with its reason, and the assistant gave none"
        : `the reason the assistant gave will not do (${call.reason.problem})`,
    );
  }
  const reasonGiven = call.reason.value === undefined ? '' : ` for the reason ${quoted(call.reason.value, 200)}`;
  return `To read endpoint ${quoted(call.base.agent_id, 128)}${reasonGiven}, ${why.join('; ')}.${ticketRule(asked)}`;
}

/** The ticket number's rule, after a message that asks for one: a form cannot carry its pattern. */
function ticketRule(asked: readonly Field[]): string {
  return asked.includes('ticket') ? ` A ticket number is ${TICKET_NUMBER_RULE}.` : '';
}

async function ask(state: AskState, message: string, rules: AttributionRules): Promise<AttributionRound> {
  const requestState = await rules.mint(state);
  const result = inputRequired({
    inputRequests: {
      [ATTRIBUTION_FORM]: inputRequired.elicit({
        mode: 'form',
        message,
        requestedSchema: formSchema(state.asked, state.ticketRequired, rules.ticketSystem),
      }),
    },
    requestState,
  });
  return { kind: 'ask', result, asked: state.asked, round: state.round };
}

async function nextRound(call: Call, state: AskState, ctx: ServerContext, rules: AttributionRules): Promise<AttributionRound> {
  const answer = inputResponse(ctx.mcpReq.inputResponses, ATTRIBUTION_FORM);
  const given = { ...state.given };
  if (answer.kind !== 'elicit') return askAgain(call, state, given, state.asked, ['no answer to the form came back'], rules);
  if (answer.action !== 'accept') {
    const refusal: AttributionSource = answer.action === 'decline' ? 'declined' : 'cancelled';
    return personRefused(call, state, refusal, rules.ticketSystem);
  }
  // Only the fields the form asked are read; anything else in the answer is ignored (MCP: a server ignores what it did not ask for).
  const content = (answer.content ?? {}) as Record<string, unknown>;
  const problems: Partial<Record<Field, string>> = {};
  if (state.asked.includes('ticket')) {
    const number = content.ticket_number;
    if (number === undefined || number === '') {
      if (state.ticketRequired) problems.ticket = "this tenant's policy requires a ticket, and the form came back without one";
      else given.ticket = null;
    } else {
      const ticket = ticketChecked(rules, { number, system: content.ticket_system ?? rules.ticketSystem });
      if (ticket.value) given.ticket = ticket.value.number;
      else problems.ticket = ticket.problem ?? 'the ticket does not follow its rule';
    }
  }
  if (state.asked.includes('reason')) {
    const reason = reasonChecked(rules, content.reason);
    if (reason.value !== undefined) given.reason = reason.value;
    else problems.reason = reason.problem;
  }
  const broken = Object.keys(problems) as Field[];
  if (broken.length > 0) return askAgain(call, state, given, broken, Object.values(problems), rules);
  return { kind: 'read', args: argsWith(call, given, rules.ticketSystem) };
}

/** The arguments of the read: each value the person gave, else the argument (which followed its rule, or the form would have asked for it). */
function argsWith(call: Call, given: AskState['given'], ticketSystem: string): BrokeredArgs {
  const reason = given.reason ?? call.reason.value;
  const ticket =
    given.ticket !== undefined ? (given.ticket === null ? undefined : { number: given.ticket, system: ticketSystem }) : call.ticket.value;
  const ticketSource: AttributionSource | undefined = ticket === undefined ? undefined : given.ticket ? 'person' : 'argument';
  return { ...call.base, reason, ticket, sources: attributionSourcesOf(given.reason !== undefined ? 'person' : 'argument', ticketSource) };
}

function personRefused(call: Call, state: AskState, refusal: AttributionSource, ticketSystem: string): AttributionRound {
  // What the form did not ask stays as it was (an argument by its rule, or an earlier answer); what it asked is refused and not sent.
  const kept = argsWith(call, state.given, ticketSystem);
  const asked = new Set(state.asked);
  const ticket = asked.has('ticket') ? undefined : kept.ticket;
  const sources = attributionSourcesOf(
    asked.has('reason') ? refusal : kept.sources.reason,
    asked.has('ticket') ? refusal : kept.sources.ticket,
  );
  const args: BrokeredArgs = { ...call.base, reason: asked.has('reason') ? undefined : kept.reason, ticket, sources };
  return { kind: 'refused-by-person', args, sentence: personRefusalSentence(sources) ?? 'The person declined: nothing was read.' };
}

async function askAgain(
  call: Call,
  state: AskState,
  given: AskState['given'],
  asked: Field[],
  problems: string[],
  rules: AttributionRules,
): Promise<AttributionRound> {
  const what = problems.join('; ');
  if (state.round >= MAX_ASK_ROUNDS) {
    const rule = asked.includes('ticket') ? ` (a ticket number is ${TICKET_NUMBER_RULE})` : '';
    return {
      kind: 'refuse',
      sentence: `After ${MAX_ASK_ROUNDS} forms, ${what}${rule}: nothing was read; call observations again to be asked anew.`,
    };
  }
  const round = state.round + 1;
  const next: AskState = { ...state, round, asked, given };
  const message = `To read endpoint ${quoted(call.base.agent_id, 128)}, ${what}: please answer again (form ${round} of ${MAX_ASK_ROUNDS}).${ticketRule(asked)}`;
  return ask(next, message, rules);
}
