/**
 * Values reported by endpoints (hostname, OS, version, client name, agent id…) are untrusted data:
 * an endpoint can report a "hostname" with line breaks, bidi overrides or a paragraph addressed to
 * the assistant. In any text a model reads they appear quoted and escaped, so they can never form
 * a line, hide or reorder text, or pass for the service's own words; `structuredContent` keeps the
 * exact values (up to MAX_REPORTED_CHARACTERS, see lib/mcp/limits.ts).
 */

/** How many characters (code points) of one reported value a text shows before it is cut. */
export const TEXT_VALUE_CHARACTERS = 120;

/**
 * Code points escaped in text: control characters (C0, C1, DEL: line breaks among them), format
 * characters (bidi controls, zero-width characters, the BOM), line and paragraph separators, lone
 * surrogates, private-use and unassigned code points; and the quote and backslash themselves.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}"\\]/gu;

const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"', '\\': '\\\\' };

function escapeCodePoint(ch: string): string {
  return SHORT_ESCAPES[ch] ?? `\\u{${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}}`;
}

function cutAndEscape(value: string, max: number): { text: string; total: number | undefined } {
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
  return { text: shown.replace(UNSAFE, escapeCodePoint), total };
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

/** A reported value in double quotes, escaped and cut as escapeReported does (the cut marker after the quote): for summaries. */
export function quoted(value: string, max = TEXT_VALUE_CHARACTERS): string {
  const { text, total } = cutAndEscape(value, max);
  return total === undefined ? `"${text}"` : `"${text}"${cutMarker(total)}`;
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
