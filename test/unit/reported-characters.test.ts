import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codePointLabel, splitHidden, withMarks } from '../../lib/reported-characters.js';
import { anyCharacter } from '../helpers/arbitraries.js';

/** The hidden characters of reported text (lib/reported-characters.ts), which the view draws as marks. */

describe('Module: lib/reported-characters.ts', () => {
  it.each([
    ['a bidi override and its end', '\u202Eevil\u202C', '⟨U+202E⟩evil⟨U+202C⟩'],
    ['an isolate and a zero-width space', 'lin\u200Bux \u2067admin\u2069', 'lin⟨U+200B⟩ux ⟨U+2067⟩admin⟨U+2069⟩'],
    ['a joiner and the BOM', 'a\u200D\uFEFF', 'a⟨U+200D⟩⟨U+FEFF⟩'],
    ['a line break, a tab and NUL', 'a\nb\tc\u0000', 'a⟨U+000A⟩b⟨U+0009⟩c⟨U+0000⟩'],
    ['a lone surrogate and a private-use character', 'x\uD800y\uE000', 'x⟨U+D800⟩y⟨U+E000⟩'],
    ['a tag character (invisible text)', 'ok\u{E0041}', 'ok⟨U+E0041⟩'],
    ['letters of any script, kept as they are', 'Grüße 磁盘 שרת 😀', 'Grüße 磁盘 שרת 😀'],
  ])('marks %s', (_what, value, marked) => {
    expect(withMarks(value)).toBe(marked);
  });

  it('labels a code point the way Unicode names it', () => {
    expect([codePointLabel('\u202E'), codePointLabel('\u0000'), codePointLabel('\u{E0041}')]).toEqual(['U+202E', 'U+0000', 'U+E0041']);
  });

  it('splits any value into visible runs and hidden characters that join back into the value, no hidden character in a run', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCharacter(), maxLength: 200 }), (value) => {
        const parts = splitHidden(value);

        expect(parts.map((p) => (typeof p === 'string' ? p : p.hidden)).join('')).toBe(value);
        for (const part of parts) {
          if (typeof part === 'string') expect(part).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u);
          else expect(part.label).toBe(codePointLabel(part.hidden));
        }
      }),
    );
  });
});
