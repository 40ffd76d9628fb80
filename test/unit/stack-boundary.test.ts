import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';

/**
 * The local stack is a guest of the product (docs/decisions.md): it runs the built bundles with
 * serverless.yml's settings and takes from lib/ only the data format producers write; lib/ keeps
 * nothing that exists for the stack or for tests. The Biome rule (biome.jsonc) fails the lint on a
 * new import; these tests read the sources as they are, so the rule and the code cannot part.
 */

/** The data format (docs/data-format.md): keys, item builders, record rules, items in wire form. */
const DATA_FORMAT = ['lib/store/attribute-values.ts', 'lib/store/items.ts', 'lib/store/keys.ts', 'lib/store/records.ts'];

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) yield* sources(path);
    else if (path.endsWith('.ts')) yield path;
  }
}

/** Every module a file names: static imports and re-exports, type imports, dynamic `import()`. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)'([^']+)'/gm)].map((m) => m[1]!);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => relative(ROOT, join(ROOT, file, '..', s)).replace(/\.js$/, '.ts'));
}

describe('The local stack and lib/', () => {
  it('imports at most four lib/ modules into local/, all of the data format', () => {
    const taken = new Set([...sources('local/')].flatMap((file) => importsOf(file).filter((m) => m.startsWith('lib/'))));

    expect([...taken].sort()).toEqual(DATA_FORMAT);
  });

  it('lets the lint refuse any other: the Biome rule on local/ admits exactly the data format', () => {
    const config = readFileSync(join(ROOT, 'biome.jsonc'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const override = (JSON.parse(config).overrides as Array<{ includes: string[]; linter?: unknown }>).find((o) =>
      o.includes.includes('local/**'),
    );
    expect(override).toBeDefined();
    const rule = (
      override!.linter as { rules: { style: { noRestrictedImports: { level: string; options: { patterns: [{ group: string[] }] } } } } }
    ).rules.style.noRestrictedImports;

    const [refused, ...admitted] = rule.options.patterns[0].group;

    expect(rule.level).toBe('error');
    expect(refused).toBe('../**/lib/**');
    expect(admitted.sort()).toEqual(DATA_FORMAT.map((m) => `!../**/${m.replace(/\.ts$/, '.js')}`));
  });

  it('keeps no local port, loopback name, npm start hint or test-only setter in lib/ and the functions', () => {
    const found = [...sources('lib'), ...sources('functions')].flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /localhost|127\.0\.0\.1|\[::1\]|\bloopback\b|npm start/i.test(line) ||
          /\b(PRIVATE_|DYNAMODB_)?PORT\b|export function (set|reset)[A-Z]/.test(line)
            ? [`${file}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );

    expect(found).toEqual([]);
  });
});
