import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { crossingLine, crossings, directImports, importClosure, sourcesUnder } from '../tools/import-closure.js';

/**
 * The boundaries the layout draws (docs/design.md §2), held on the whole import closure: every
 * module a folder's files reach, through any chain of imports, types and dynamic imports included
 * (test/tools/import-closure.ts), not only the imports each file writes.
 * - local/ is a guest of the product: it runs the built bundles with serverless.yml's settings and
 *   takes from lib/ only the data format (lib/data-format/, through its entry, index.ts);
 * - lib/data-format/ is a leaf: it reaches nothing else of lib/;
 * - what ships (functions/, lib/) reaches nothing of local/ or test/.
 * The Biome rule on local/ (biome.jsonc) refuses a direct import as it is typed; these tests hold
 * the closure, where a module of infra/ or of the data format could carry lib/ in.
 */

const DATA_FORMAT = 'lib/data-format/';
const DATA_FORMAT_ENTRY = 'lib/data-format/index.ts';

describe('The import closure of local/', () => {
  it('reaches nothing of lib/ but the data format, through any chain of imports', () => {
    const found = crossings(ROOT, sourcesUnder(ROOT, 'local'), { forbidden: ['lib/'], allowed: [DATA_FORMAT] });

    expect(found.map(crossingLine)).toEqual([]);
  });

  it('enters lib/ only through the data format’s entry (lib/data-format/index.ts)', () => {
    const entered = sourcesUnder(ROOT, 'local').flatMap((file) =>
      directImports(ROOT, file)
        .filter((module) => module.startsWith('lib/') && module !== DATA_FORMAT_ENTRY)
        .map((module) => `${file} -> ${module}`),
    );

    expect(entered).toEqual([]);
    expect(sourcesUnder(ROOT, 'local').some((file) => directImports(ROOT, file).includes(DATA_FORMAT_ENTRY))).toBe(true);
  });

  it('lets the lint refuse a direct import of any other lib/ module: the Biome rule on local/ admits the entry alone', () => {
    const config = readFileSync(join(ROOT, 'biome.jsonc'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const override = (JSON.parse(config).overrides as Array<{ includes: string[]; linter?: unknown }>).find((o) =>
      o.includes.includes('local/**'),
    );
    expect(override).toBeDefined();
    const rule = (
      override!.linter as { rules: { style: { noRestrictedImports: { level: string; options: { patterns: [{ group: string[] }] } } } } }
    ).rules.style.noRestrictedImports;

    expect(rule.level).toBe('error');
    expect(rule.options.patterns[0].group).toEqual(['../**/lib/**', `!../**/${DATA_FORMAT_ENTRY.replace(/\.ts$/, '.js')}`]);
  });
});

describe('The data format (lib/data-format/)', () => {
  it('is a leaf: its closure holds nothing of lib/ outside it', () => {
    const found = crossings(ROOT, sourcesUnder(ROOT, 'lib/data-format'), {
      forbidden: ['lib/', 'functions/', 'infra/', 'local/', 'test/'],
      allowed: [DATA_FORMAT],
    });

    expect(found.map(crossingLine)).toEqual([]);
  });

  it('shows its whole face in its entry: every module of the folder is reached from index.ts', () => {
    const reached = new Set(importClosure(ROOT, [DATA_FORMAT_ENTRY]).keys());

    expect(sourcesUnder(ROOT, 'lib/data-format').filter((file) => !reached.has(file))).toEqual([]);
  });
});

describe('What ships (functions/ and lib/)', () => {
  it('reaches nothing of local/ or test/', () => {
    const found = crossings(ROOT, [...sourcesUnder(ROOT, 'functions'), ...sourcesUnder(ROOT, 'lib')], { forbidden: ['local/', 'test/'] });

    expect(found.map(crossingLine)).toEqual([]);
  });

  it('keeps no local port, loopback name, local default, npm start hint, endpoint variable of its own, test-only setter or option in lib/ and the functions', () => {
    const found = [...sourcesUnder(ROOT, 'lib'), ...sourcesUnder(ROOT, 'functions')].flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /localhost|127\.0\.0\.1|\[::1\]|\bloopback\b|npm start/i.test(line) ||
          /\b(PRIVATE_|DYNAMODB_)?PORT\b|export function (set|reset)[A-Z]/.test(line) ||
          // The local broker's name as a default; STS at an address of the service's own (the SDK has
          // AWS_ENDPOINT_URL_STS); an option only tests pass.
          /local-broker|\bSTS_ENDPOINT\b|\(tests?\)/.test(line)
            ? [`${file}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );

    expect(found).toEqual([]);
  });
});

describe("The gateway's event, read in functions/", () => {
  it('reaches lib/ only as plain values: no module of lib/ names an API Gateway event type, or reads an event', () => {
    const named = sourcesUnder(ROOT, 'lib').flatMap((file) =>
      /\bAPIGateway\w*(Event|Result)\b|\bRestEvent\b|\bhttpMethod\b|\bmultiValueHeaders\b/.test(readFileSync(join(ROOT, file), 'utf8'))
        ? [file]
        : [],
    );

    expect(named).toEqual([]);
  });

  it("takes Lambda's own types only in the middy chain and the invocation's deadline, which the context is", () => {
    const lambdaTypes = sourcesUnder(ROOT, 'lib').filter((file) => /from 'aws-lambda'/.test(readFileSync(join(ROOT, file), 'utf8')));

    expect(lambdaTypes).toEqual(['lib/invocation-deadline.ts', 'lib/middleware/failures.ts']);
  });

  it('has every handler read its event with the one reader of payload 1.0 events (functions/rest-event.ts)', () => {
    const handlers = sourcesUnder(ROOT, 'functions').filter((file) => file.endsWith('/handler.ts'));

    expect(handlers.sort()).toEqual([
      'functions/authorizer/handler.ts',
      'functions/inventory/handler.ts',
      'functions/mcp/handler.ts',
      'functions/observations/handler.ts',
    ]);
    for (const handler of handlers) expect(directImports(ROOT, handler), handler).toContain('functions/rest-event.ts');
  });
});

describe('Function: crossings (test/tools/import-closure.ts), on a tree of its own', () => {
  const root = mkdtempSync(join(tmpdir(), 'import-closure-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  /** Writes a file for the running test alone: it is put back as it was when the test ends, passed or not. */
  const change = (path: string, text: string): void => {
    const before = existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : undefined;
    write(path, text);
    onTestFinished(() => (before === undefined ? rmSync(join(root, path)) : write(path, before)));
  };
  write('lib/errors.ts', 'export class Failure extends Error {}\n');
  write('lib/data-format/keys.ts', "export const key = (id: string): string => 'A#' + id;\n");
  write('lib/data-format/index.ts', "export * from './keys.js';\n");
  write('local/seed.ts', "import { key } from '../lib/data-format/index.js';\nexport const seeded = key('a');\n");
  const boundary = { forbidden: ['lib/'], allowed: ['lib/data-format/'] };

  it('finds nothing where local/ takes only the data format', () => {
    expect(crossings(root, sourcesUnder(root, 'local'), boundary)).toEqual([]);
  });

  it('finds lib/errors.ts reached from local/ through a module of infra/, naming the chain', () => {
    write('infra/answers.ts', "import { Failure } from '../lib/errors.js';\nexport const failure = new Failure('x');\n");
    change('local/gateway.ts', "import { failure } from '../infra/answers.js';\nexport const answer = failure.message;\n");

    expect(crossings(root, sourcesUnder(root, 'local'), boundary).map(crossingLine)).toEqual([
      'local/gateway.ts -> infra/answers.ts -> lib/errors.ts',
    ]);
  });

  it('finds it through the data format itself, when a module of the data format imports it', () => {
    change('lib/data-format/records.ts', "export type { Failure } from '../errors.js';\n");
    change('lib/data-format/index.ts', "export * from './keys.js';\nexport * from './records.js';\n");

    expect(crossings(root, sourcesUnder(root, 'local'), boundary).map(crossingLine)).toEqual([
      'local/seed.ts -> lib/data-format/index.ts -> lib/data-format/records.ts -> lib/errors.ts',
    ]);
  });

  it('counts a type-only import, a dynamic import() and a type written as typeof import()', () => {
    change('local/types.ts', "import type { Failure } from '../lib/errors.js';\nexport type F = Failure;\n");
    change('local/later.ts', "export const later = () => import('../lib/errors.js');\n");
    change('local/query.ts', "export type E = typeof import('../lib/errors.js');\n");

    expect(crossings(root, sourcesUnder(root, 'local'), boundary).map(crossingLine)).toEqual([
      expect.stringMatching(/^local\/(later|query|types)\.ts -> lib\/errors\.ts$/),
    ]);
    for (const file of ['local/types.ts', 'local/later.ts', 'local/query.ts']) {
      const alone = crossings(root, [file], boundary).map(crossingLine);
      expect(alone, file).toEqual([`${file} -> lib/errors.ts`]);
    }
  });
});
