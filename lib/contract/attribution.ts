import * as z from 'zod/mini';
import '../data-format/zod-english-locale.js';
import { OBSERVATION_BOUNDS, TICKET_NUMBER_PATTERN } from './schemas.js';

/** The attribution headers of getEndpointObservations, by their lower-case names. */
export const ATTRIBUTION_HEADERS = Object.freeze({
  reason: 'x-service-reason',
  reasonEncoding: 'x-service-reason-encoding',
  ticketNumber: 'x-service-ticket-number',
  ticketSystem: 'x-service-ticket-system',
  source: 'x-service-attribution-source',
});

/**
 * How a reason in any script crosses an HTTP hop unchanged. Header values are bytes: Node's fetch
 * refuses characters above U+00FF and line breaks and trims surrounding spaces, and API Gateway
 * gives no promise about non-ASCII bytes. So a sender may percent-encode the reason's UTF-8
 * (RFC 3986, as `encodeURIComponent` does) and say so with `X-Service-Reason-Encoding: percent`;
 * without that header the value is taken literally, as before. The MCP broker always encodes.
 */
export const REASON_ENCODING = 'percent';

/** The reason as the broker sends it: percent-encoded UTF-8 plus the header that says so. */
export function encodedReasonHeaders(reason: string): Record<string, string> {
  return { 'X-Service-Reason': encodeURIComponent(reason), 'X-Service-Reason-Encoding': REASON_ENCODING };
}

/**
 * The reason a sender meant: the header value itself, or its percent-decoded UTF-8 when the
 * encoding header says `percent`. Undefined when the encoding is unknown or the value does not
 * decode (a stray `%`, bytes that are not UTF-8): the caller answers 400.
 */
export function decodedReason(value: string | undefined, encoding: string | undefined): string | undefined | null {
  if (value === undefined || encoding === undefined) return value;
  if (encoding.trim().toLowerCase() !== REASON_ENCODING) return null;
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/**
 * Where an attribution value came from, as the MCP broker tells the observations operation in
 * `X-Service-Attribution-Source` (an extension of ours, not one of the contract's headers), so the
 * audit item can say it: `argument`, the assistant's tool arguments; `person`, the person's answer
 * to the form the tool asked them; `declined` / `cancelled`, the person was asked for it and
 * declined, or dismissed the form: nothing is given, and nothing is read.
 */
export const ATTRIBUTION_SOURCES = Object.freeze(['argument', 'person', 'declined', 'cancelled'] as const);
export type AttributionSource = (typeof ATTRIBUTION_SOURCES)[number];
/** The sources that give no value: the person refused to. */
type PersonRefusal = Extract<AttributionSource, 'declined' | 'cancelled'>;

/** Where the reason and the ticket of one read came from; `ticket` only when a ticket was sent (or refused). */
export interface AttributionSources {
  reason: AttributionSource;
  ticket?: AttributionSource;
}

/** `X-Service-Attribution-Source` for `sources`: `reason=argument` or `reason=person, ticket=person` (an RFC 8941 dictionary of tokens). */
export function attributionSourceValue(sources: AttributionSources): string {
  return sources.ticket === undefined ? `reason=${sources.reason}` : `reason=${sources.reason}, ticket=${sources.ticket}`;
}

const SOURCE_ALTERNATIVES = ATTRIBUTION_SOURCES.join('|');
/** The grammar of `X-Service-Attribution-Source`: the reason's source, then the ticket's when a ticket is sent (or was refused). */
export const ATTRIBUTION_SOURCE_PATTERN = new RegExp(`^reason=(${SOURCE_ALTERNATIVES})(?: *, *ticket=(${SOURCE_ALTERNATIVES}))?$`);

/** The sources a header value names, or null when it does not follow ATTRIBUTION_SOURCE_PATTERN. */
export function parsedAttributionSources(value: string): AttributionSources | null {
  const match = ATTRIBUTION_SOURCE_PATTERN.exec(value.trim());
  if (!match) return null;
  const [, reason, ticket] = match as unknown as [string, AttributionSource, AttributionSource | undefined];
  return attributionSourcesOf(reason, ticket);
}

/** The sources of a read: the reason's, and the ticket's when a ticket was sent or refused. */
export function attributionSourcesOf(reason: AttributionSource, ticket: AttributionSource | undefined): AttributionSources {
  return ticket === undefined ? { reason } : { reason, ticket };
}

/** The one sentence of a header that parsedAttributionSources refuses. */
export const ATTRIBUTION_SOURCE_RULE = `X-Service-Attribution-Source must be "reason=<source>" or "reason=<source>, ticket=<source>", each source one of ${ATTRIBUTION_SOURCES.join(', ')}.`;

const isRefusal = (source: AttributionSource | undefined): source is PersonRefusal => source === 'declined' || source === 'cancelled';

/**
 * The refusal the person made, as the sentence both the observations operation (403) and the MCP
 * tool answer, or undefined when the person refused nothing: "The person declined to give a
 * ticket: nothing was read." A form asks for all it needs at once, so one action covers every
 * field it asked.
 */
export function personRefusalSentence(sources: AttributionSources | undefined): string | undefined {
  if (!sources) return undefined;
  const refused = (['reason', 'ticket'] as const).filter((field) => isRefusal(sources[field]));
  const action = refused.map((field) => sources[field]).find(isRefusal);
  if (action === undefined) return undefined;
  const what = refused.map((field) => `a ${field}`).join(' and ');
  return action === 'declined'
    ? `The person declined to give ${what}: nothing was read.`
    : `The person cancelled the question for ${what}: nothing was read.`;
}

/** The observations operation's refusal when the tenant's policy requires a ticket and none came. */
export const TICKET_REQUIRED = 'This tenant requires a ticket: send X-Service-Ticket-Number and X-Service-Ticket-System.';

/** What is wrong with a reason, if anything: the one rule of the door and the private operation alike. */
export type ReasonProblem = 'missing' | 'blank' | 'tooShort' | 'tooLong';

/** Control, format (bidi, zero-width), separator and lone-surrogate code points: present, but nothing a reader sees. */
const INVISIBLE = /^[\p{Cc}\p{Cf}\p{Z}\p{Cs}]$/u;

/** The code points of `text` a reader can see (letters, digits, signs, symbols). */
export function visibleCharacters(text: string): number {
  let count = 0;
  for (const ch of text) if (!INVISIBLE.test(ch)) count += 1;
  return count;
}

/**
 * The reason rule, on the reason as sent (it is trimmed here): present; 3 to 500 characters after
 * trimming; and at least 3 of them visible, so a reason of NULs, zero-width or bidi characters, or
 * spaces, is not a reason (it would be audited as one).
 */
export function reasonProblem(reason: string | undefined): ReasonProblem | undefined {
  if (reason === undefined) return 'missing';
  const trimmed = reason.trim();
  const visible = visibleCharacters(trimmed);
  if (visible === 0) return 'blank';
  if (trimmed.length > OBSERVATION_BOUNDS.reason.max) return 'tooLong';
  if (visible < OBSERVATION_BOUNDS.reason.min || trimmed.length < OBSERVATION_BOUNDS.reason.min) return 'tooShort';
  return undefined;
}

/** The sentence for a reason problem, naming the reason as the caller sent it (`reason`, `X-Service-Reason`). */
export function reasonSentence(name: string, problem: ReasonProblem, reason?: string): string {
  const { min, max } = OBSERVATION_BOUNDS.reason;
  const trimmed = (reason ?? '').trim();
  switch (problem) {
    case 'missing':
      return `${name} is required: say why the endpoint is read, in ${min} to ${max} characters`;
    case 'blank':
      return `${name} is blank: say why the endpoint is read, with at least ${min} visible characters (spaces, control and invisible characters do not count)`;
    case 'tooShort': {
      const visible = visibleCharacters(trimmed);
      return `${name} is too short: it has ${visible} visible character${visible === 1 ? '' : 's'}, and at least ${min} are needed`;
    }
    case 'tooLong':
      return `${name} is too long: it has ${trimmed.length} characters after trimming, and at most ${max} are allowed`;
  }
}

/**
 * The reason as a zod schema for a caller that names it `name`: its JSON Schema keeps the length
 * bounds (minLength 3, maxLength 500); every refusal is the one sentence of reasonSentence, without
 * its final period (callers add their own ending).
 */
export function reasonSchema(name: string) {
  const sentence = (input: unknown): string =>
    reasonSentence(
      name,
      reasonProblem(typeof input === 'string' ? input : undefined) ?? 'tooShort',
      typeof input === 'string' ? input : undefined,
    );
  const { min, max } = OBSERVATION_BOUNDS.reason;
  return z
    .string({ error: () => reasonSentence(name, 'missing') })
    .check(
      z.trim(),
      z.minLength(min, { error: (issue) => sentence(issue.input) }),
      z.maxLength(max, { error: (issue) => sentence(issue.input) }),
    )
    .check(z.refine((v) => reasonProblem(v) === undefined, { error: (issue) => sentence(issue.input) }));
}

/** The one ticket system accepted when TICKET_SYSTEM names none (lib/config.ts's default; test/unit/openapi.test.ts holds them equal): the OpenAPI document's. */
export const DEFAULT_TICKET_SYSTEM = 'servicenow';

/**
 * Attribution as the handler accepts it: a reason by the reason rule (reasonProblem), and the
 * ticket number (pattern) with the ticket system (the one configured constant) both or neither.
 */
export function attributionSchema(ticketSystem: string) {
  return z
    .object({
      reason: reasonSchema('X-Service-Reason'),
      ticketNumber: z.optional(
        z
          .string()
          .check(
            z.minLength(OBSERVATION_BOUNDS.ticketNumber.min, 'X-Service-Ticket-Number must not be empty'),
            z.maxLength(OBSERVATION_BOUNDS.ticketNumber.max, 'X-Service-Ticket-Number must be at most 100 characters'),
            z.regex(TICKET_NUMBER_PATTERN, 'X-Service-Ticket-Number has characters outside its pattern'),
          ),
      ),
      ticketSystem: z.optional(z.literal(ticketSystem, { error: `X-Service-Ticket-System must be "${ticketSystem}"` })),
    })
    .check(
      z.refine((a) => (a.ticketNumber === undefined) === (a.ticketSystem === undefined), {
        message: 'X-Service-Ticket-Number and X-Service-Ticket-System must be sent together',
      }),
    );
}
export type Attribution = z.output<ReturnType<typeof attributionSchema>>;
