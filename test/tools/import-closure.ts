import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The import closure of source files: every module of the project they reach by import, followed
 * through each module it reaches in turn, with the chain that reaches it. Every form counts: a
 * static import or re-export, `import type` (a type is code another module wrote), a dynamic
 * `import()`, and a `typeof import('…')` in a type: TypeScript's own scanner (preProcessFile)
 * lists them, as the compiler would. Packages are not followed (only `./` and `../` specifiers);
 * `x.js` is read as `x.ts` where that exists, as the bundler resolves it.
 */

/** Every `.ts` file under `dir` (a path under `root`), as a path under `root` with `/` separators. */
export function sourcesUnder(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const name of readdirSync(join(root, at))) {
      const path = `${at}/${name}`;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) found.push(path);
    }
  };
  walk(dir);
  return found.sort();
}

/** The project file a relative specifier names from `from` (a path under `root`); undefined when none exists there. */
function resolveSpecifier(root: string, from: string, specifier: string): string | undefined {
  const base = resolve(root, dirname(from), specifier);
  const candidates = [
    base,
    base.replace(/\.(m?js)$/, (_, ext: string) => (ext === 'mjs' ? '.mts' : '.ts')),
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  const file = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  return file === undefined ? undefined : relative(root, file).split(sep).join('/');
}

/** The relative specifiers a file names, in every form (see above). */
export function importedSpecifiers(text: string): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles.map((f) => f.fileName).filter((name) => name.startsWith('./') || name.startsWith('../'));
}

/** The direct imports of one file, as paths under `root` (a specifier that names no file is kept as it would resolve). */
export function directImports(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return importedSpecifiers(text).map(
    (specifier) =>
      resolveSpecifier(root, file, specifier) ??
      relative(root, resolve(root, dirname(file), specifier))
        .split(sep)
        .join('/'),
  );
}

/**
 * The closure of `entries`: each module reached, mapped to the chain of files that reaches it
 * (the entry first, the module last), shortest first found.
 */
export function importClosure(root: string, entries: readonly string[]): Map<string, readonly string[]> {
  const reached = new Map<string, readonly string[]>(entries.map((entry) => [entry, [entry]]));
  const queue = [...entries];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const chain = reached.get(file) ?? [file];
    if (!existsSync(join(root, file))) continue;
    for (const imported of directImports(root, file)) {
      if (reached.has(imported)) continue;
      reached.set(imported, [...chain, imported]);
      queue.push(imported);
    }
  }
  return reached;
}

/** A module of a closure that a boundary forbids, with the chain of imports that reaches it. */
export interface Crossing {
  module: string;
  chain: readonly string[];
}

/**
 * The modules `entries` reach that lie under one of `forbidden` (folders, with a trailing `/`)
 * and under none of `allowed`, each with its chain: empty when the boundary holds.
 */
export function crossings(
  root: string,
  entries: readonly string[],
  boundary: { forbidden: readonly string[]; allowed?: readonly string[] },
): Crossing[] {
  const inside = (path: string, folders: readonly string[]): boolean => folders.some((folder) => path.startsWith(folder));
  return [...importClosure(root, entries)]
    .filter(([module]) => inside(module, boundary.forbidden) && !inside(module, boundary.allowed ?? []))
    .map(([module, chain]) => ({ module, chain }))
    .sort((a, b) => (a.module < b.module ? -1 : 1));
}

/** A crossing as one line: `local/a.ts -> infra/b.ts -> lib/errors.ts`. */
export function crossingLine(crossing: Crossing): string {
  return crossing.chain.join(' -> ');
}
