/**
 * The characters of endpoint-reported text that a reader cannot see, or that change how the text
 * around them is drawn: control characters (C0, C1, DEL: line breaks among them), format characters
 * (bidi overrides, embeddings and isolates, zero-width characters, the BOM, tag characters), line
 * and paragraph separators, lone surrogates, private-use and unassigned code points. Such a
 * character can make `\u202Eexe.jpg` read "gpj.exe" or hide a word inside a name, so every place
 * that shows reported text to a person or a model writes each one as a visible mark instead.
 * Pure and DOM-free: the tool text and the MCP App view mark the same characters.
 */

/** The classes of the characters above, for a regular expression with the `u` flag. */
export const HIDDEN_CHARACTER_CLASSES = '\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}\\p{Co}\\p{Cn}';

const HIDDEN = /* @__PURE__ */ new RegExp(`[${HIDDEN_CHARACTER_CLASSES}]`, 'gu');

/** A code point as "U+202E" (at least four hex digits, upper case), the way Unicode names it. */
export function codePointLabel(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A hidden character of a reported value, with the label its mark shows. */
export interface HiddenCharacter {
  hidden: string;
  label: string;
}

/**
 * A reported value cut into its visible runs (strings) and its hidden characters, in order, so a
 * view can draw each hidden one as a mark of its own. Joining the strings and the `hidden` fields
 * gives the value back exactly; no string part holds a hidden character.
 */
export function splitHidden(value: string): Array<string | HiddenCharacter> {
  const parts: Array<string | HiddenCharacter> = [];
  let from = 0;
  for (const match of value.matchAll(HIDDEN)) {
    if (match.index > from) parts.push(value.slice(from, match.index));
    parts.push({ hidden: match[0], label: codePointLabel(match[0]) });
    from = match.index + match[0].length;
  }
  if (from < value.length) parts.push(value.slice(from));
  return parts;
}

/** A reported value as plain text with each hidden character written as `⟨U+202E⟩` (for a tooltip, an echo). */
export function withMarks(value: string): string {
  return value.replace(HIDDEN, (character) => `⟨${codePointLabel(character)}⟩`);
}
