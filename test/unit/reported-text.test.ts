import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capReported, escapeReported, quoted } from '../../lib/mcp/reported-text.js';
import { anyCharacter } from '../helpers/arbitraries.js';

describe('Function: quoted (endpoint-reported values in text)', () => {
  it.each([
    ['a plain hostname', 'web-1', '"web-1"'],
    ['line breaks and tabs', 'a\nb\r\tc', '"a\\nb\\r\\tc"'],
    ['quotes and backslashes', 'say "hi" \\o/', '"say \\"hi\\" \\\\o/"'],
    ['a bidi override', 'admin\u202Egnp.exe', '"admin\\u{202E}gnp.exe"'],
    ['zero-width characters and the BOM', 'ac\u200Bme\uFEFF', '"ac\\u{200B}me\\u{FEFF}"'],
    ['NUL, BEL and ESC', '\u0000\u0007\u001b[31m', '"\\u{0000}\\u{0007}\\u{001B}[31m"'],
    ['the line and paragraph separators', 'a\u2028b\u2029c', '"a\\u{2028}b\\u{2029}c"'],
    ['a lone surrogate', 'x\uD800y', '"x\\u{D800}y"'],
    ['letters of any script, kept as they are', 'Grüße 磁盘 ✓ 😀', '"Grüße 磁盘 ✓ 😀"'],
  ])('writes %s visibly, in one line', (_what, value, text) => {
    expect(quoted(value)).toBe(text);
  });

  it('cuts a long value at 120 characters and says how long it was', () => {
    expect(quoted('n'.repeat(10_240))).toBe(`"${'n'.repeat(120)}"…[cut: 10240 characters in all]`);
  });

  it('counts characters, not UTF-16 units, so a cut never splits a character', () => {
    expect(quoted('😀'.repeat(121))).toBe(`"${'😀'.repeat(120)}"…[cut: 121 characters in all]`);
  });

  it('never lets any value start a line, hide a character, or run past its bound', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCharacter(), maxLength: 400 }), (value) => {
        const text = quoted(value);
        expect(text).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u);
        expect(text.startsWith('"')).toBe(true);
        expect(text.length).toBeLessThanOrEqual(120 * 10 + 2 + 40);
      }),
    );
  });
});

describe('Function: escapeReported', () => {
  it('puts the cut marker inside the text (for the JSON copy)', () => {
    expect(escapeReported('x'.repeat(130))).toBe(`${'x'.repeat(120)}…[cut: 130 characters in all]`);
  });
});

describe('Function: capReported (structuredContent)', () => {
  it('keeps a value exactly up to the bound, control characters and all', () => {
    const value = 'a\n\u202E'.repeat(100);
    expect(capReported(value, 300)).toBe(value);
  });

  it('cuts a longer value at the bound, with the marker', () => {
    expect(capReported('y'.repeat(20), 16)).toBe(`${'y'.repeat(16)}…[cut: 20 characters in all]`);
  });
});
