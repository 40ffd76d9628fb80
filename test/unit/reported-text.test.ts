import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capReported, escapeReported, inertJson, quoted, splitQuoted, unescapeReported } from '../../lib/mcp/reported-text.js';
import { anyCharacter } from '../helpers/arbitraries.js';
import { elementsIn, renderMarkdown, textOf } from '../helpers/markdown.js';

describe('Function: quoted (endpoint-reported values in text)', () => {
  it.each([
    ['a plain hostname', 'web-1', '`web-1`'],
    ['line breaks and tabs', 'a\nb\r\tc', '`a\\nb\\r\\tc`'],
    ['quotes and backslashes', 'say "hi" \\o/', '`say "hi" \\\\o/`'],
    ['a bidi override', 'admin\u202Egnp.exe', '`admin\\u{202E}gnp.exe`'],
    ['zero-width characters and the BOM', 'ac\u200Bme\uFEFF', '`ac\\u{200B}me\\u{FEFF}`'],
    ['NUL, BEL and ESC', '\u0000\u0007\u001b[31m', '`\\u{0000}\\u{0007}\\u{001B}[31m`'],
    ['the line and paragraph separators', 'a\u2028b\u2029c', '`a\\u{2028}b\\u{2029}c`'],
    ['a lone surrogate', 'x\uD800y', '`x\\u{D800}y`'],
    ['letters of any script, kept as they are', 'Grüße 磁盘 ✓ 😀', '`Grüße 磁盘 ✓ 😀`'],
    ['a markdown image', '![x](https://evil.example/p.png)', '`![x](https://evil.example/p.png)`'],
    ['backticks inside', 'a`b``c', '```a`b``c```'],
    ['a backtick at an end', '`x', '`` `x ``'],
    ['spaces at both ends', ' x ', '`  x  `'],
    ['nothing', '', '` `'],
  ])('writes %s visibly, in one line, as a code span', (_what, value, text) => {
    expect(quoted(value)).toBe(text);
  });

  it('cuts a long value at 120 characters and says how long it was', () => {
    expect(quoted('n'.repeat(10_240))).toBe(`\`${'n'.repeat(120)}\`…[cut: 10240 characters in all]`);
  });

  it('counts characters, not UTF-16 units, so a cut never splits a character', () => {
    expect(quoted('😀'.repeat(121))).toBe(`\`${'😀'.repeat(120)}\`…[cut: 121 characters in all]`);
  });

  it('never lets any value start a line, hide a character, or run past its bound', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCharacter(), maxLength: 400 }), (value) => {
        const text = quoted(value);
        expect(text).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u);
        expect(text.startsWith('`')).toBe(true);
        expect(text.length).toBeLessThanOrEqual(120 * 10 + 2 * 122 + 40);
      }),
    );
  });

  it('renders any value, markdown or HTML included, as one code span and nothing else, in a CommonMark and GFM renderer', () => {
    const markup = fc.constantFrom(
      '![x](https://evil.example/p.png?d=',
      '[link](',
      '<img src=x onerror=alert(1)>',
      '<https://evil.example>',
      'www.evil.example',
      'https://evil.example/x',
      'a@evil.example',
      '`',
      '``',
      '|',
      '# ',
      '> ',
      '- ',
      '```',
      '*',
      '_',
      '~~',
      '&lt;',
      '\\',
      ' ',
      '\n',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(markup, fc.string({ unit: anyCharacter(), maxLength: 8 })), { maxLength: 12 }), (parts) => {
        const html = renderMarkdown(`hostname ${quoted(parts.join(''))} and more`);

        expect([...elementsIn(html)].sort()).toEqual(['code', 'p']);
        expect(html.match(/<code>/g)).toHaveLength(1);
      }),
      { numRuns: 500 },
    );
  });
});

describe('Functions: splitQuoted and unescapeReported (a text read back by a reader that draws no markdown)', () => {
  it('reads back every value quoted in a text, whatever it holds, and leaves the words around it as they are', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom('`', '``', ' ', '\\', '\\n', '"', '\u202E'), fc.string({ unit: anyCharacter(), maxLength: 8 })), {
          maxLength: 12,
        }),
        (parts) => {
          const value = parts.join('');
          const shown = Array.from(value).slice(0, 120).join('');
          const cut = Array.from(value).length > 120 ? `…[cut: ${Array.from(value).length} characters in all]` : '';

          expect(splitQuoted(`hostname ${quoted(value)} and more`)).toEqual(['hostname ', { quoted: shown }, `${cut} and more`]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads back the escapes of escapeReported', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCharacter(), maxLength: 100 }), (value) => {
        expect(unescapeReported(escapeReported(value))).toBe(value);
      }),
    );
  });

  it('leaves a text without a code span as one part, and an unclosed backtick as a backtick', () => {
    expect(splitQuoted('No endpoint is visible.')).toEqual(['No endpoint is visible.']);
    expect(splitQuoted('a ` b `` c')).toEqual(['a ` b `` c']);
  });
});

describe('Function: inertJson (the JSON text copy)', () => {
  /** What a renderer could take for markup, emphasis and strong, strikethrough and backslash escapes included. */
  const markup = fc.constantFrom(
    '![x](https://evil.example/p.png?d=',
    '](',
    '<img src=x>',
    '<b>',
    'www.evil.example',
    'WWW.EVIL.EXAMPLE',
    'http://evil.example',
    'mailto:a@evil.example',
    '`code`',
    '|a|b|',
    '_it_',
    '__it__',
    '*it*',
    '**it**',
    '***',
    '~x~',
    '~~x~~',
    '&amp;',
    '&#x41;',
    '&copy',
    '[^1]',
    '[x]: https://evil.example',
    '\\[',
    '\\',
    '\\_',
    '"',
    '# ',
    '- ',
    '1. ',
    '> ',
    '    ',
    '\n',
    '\t',
  );
  const hostile = fc.array(fc.oneof(markup, fc.string({ unit: anyCharacter(), maxLength: 8 })), { maxLength: 12 }).map((p) => p.join(''));
  /** Any JSON value whose strings (keys included) are hostile. */
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      hostile,
      fc.integer(),
      // JSON has no -0, NaN or infinities.
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(hostile, tie('value'), { maxKeys: 4 }),
    ),
  })).value;

  it.each([
    ['_it_', '{"hostname":"\\u005Fit\\u005F"}'],
    ['**it**', '{"hostname":"\\u002A\\u002Ait\\u002A\\u002A"}'],
    ['~~x~~', '{"hostname":"\\u007E\\u007Ex\\u007E\\u007E"}'],
    ['say "hi" \\o/', '{"hostname":"say \\u0022hi\\u0022 \\u005Co/"}'],
    ['a\nb', '{"hostname":"a\\nb"}'],
    ['web-1.corp.example', '{"hostname":"web-1.corp.example"}'],
  ])('writes %j with every character a renderer would not draw as itself as a JSON escape', (hostname, copy) => {
    expect(inertJson({ hostname })).toBe(copy);
  });

  it('parses back to exactly the value it was given', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(JSON.parse(inertJson(value))).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it('renders, in a CommonMark and GFM renderer, as one paragraph whose text is exactly the copy: no emphasis, strong, strikethrough, link, image, autolink, entity, code or HTML', () => {
    fc.assert(
      fc.property(json, (value) => {
        const copy = inertJson({ hostname: value, agent_id: 'a-1', endpoints: [{ os: value }] });
        const html = renderMarkdown(copy);

        expect([...elementsIn(html)]).toEqual(['p']);
        expect(textOf(html)).toBe(copy);
      }),
      { numRuns: 500 },
    );
  });

  it('gives the copy of a hostname _it_ as the text it is, where JSON alone would be drawn as emphasis', () => {
    expect(renderMarkdown(JSON.stringify({ hostname: '_it_' }))).toContain('<em>it</em>');

    expect(textOf(renderMarkdown(inertJson({ hostname: '_it_' })))).toBe('{"hostname":"\\u005Fit\\u005F"}');
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
