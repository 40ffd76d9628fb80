import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, context, type Plugin } from 'esbuild';
import { FUNCTIONS, type FunctionName, functionsBuildOptions, NODE_BUNDLE, ROOT } from '../../infra/build.js';
import { buildViews } from '../../infra/build-views.js';

/**
 * The code the local function sandboxes run: each function's bundle, made by the esbuild options
 * of `npm run build` (infra/build.ts functionsBuildOptions), and the runtime client they run under.
 * `npm start` builds the bundles when it starts and keeps esbuild watching the sources: a change
 * rebuilds them, and the functions whose bundle changed get new instances for their next events.
 * The MCP App view (lib/mcp/app/, infra/build-views.ts) is built beside the MCP bundle at the start.
 */

export interface LocalBundles {
  /** The folder holding `<function>/index.mjs` (each function's LAMBDA_TASK_ROOT is its folder there). */
  dir: string;
  /** Called after a rebuild with the functions whose bundle changed. */
  onChange(listener: (changed: FunctionName[]) => void): void;
  stop(): Promise<void>;
}

const RUNTIME_CLIENT_SOURCE = join('local', 'lambda', 'runtime-client.ts');

/**
 * The runtime client (local/lambda/runtime-client.ts) as one ES module Node runs as it is, under
 * node_modules/.cache named by the hash of what was built. It is built in memory at every start (a
 * few milliseconds: one small file and the modules it imports), so a change to the client or to any
 * of them is in the next stack, and any number of stacks share one file per version.
 */
export async function runtimeClientModule(root = ROOT): Promise<string> {
  const { outputFiles } = await build({
    ...NODE_BUNDLE,
    entryPoints: [join(root, RUNTIME_CLIENT_SOURCE)],
    outfile: 'client.mjs',
    write: false,
    logLevel: 'warning',
  });
  const code = outputFiles[0]?.contents;
  if (!code) throw new Error('esbuild built no runtime client');
  const dir = join(root, 'node_modules', '.cache', 'lambda-runtime');
  const outfile = join(dir, `client-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (existsSync(outfile)) return outfile;
  mkdirSync(dir, { recursive: true });
  // Written aside and renamed: stacks starting at once never run half a file.
  const aside = `${outfile}.${process.pid}.${randomUUID()}.tmp.mjs`;
  writeFileSync(aside, code);
  renameSync(aside, outfile);
  return outfile;
}

/** Bundles that are there already (a test run's, or `npm run build`'s dist/ with LAMBDA_BUNDLES): nothing watches them. */
export function prebuiltBundles(dir: string): LocalBundles {
  for (const name of Object.keys(FUNCTIONS)) {
    const bundle = join(dir, name, 'index.mjs');
    if (!existsSync(bundle)) throw new Error(`no bundle of the function "${name}" at ${bundle} (\`npm run build\` makes them)`);
  }
  return { dir, onChange: () => undefined, stop: async () => undefined };
}

function bundleHashes(dir: string, names: readonly FunctionName[]): Map<FunctionName, string> {
  const hashes = new Map<FunctionName, string>();
  for (const name of names) {
    const file = join(dir, name, 'index.mjs');
    if (existsSync(file)) hashes.set(name, createHash('sha256').update(readFileSync(file)).digest('hex'));
  }
  return hashes;
}

/**
 * Builds every function (or those `functions` names) into `dir` with `npm run build`'s options,
 * then keeps esbuild watching the sources under `root`: each rebuild that succeeds reports the
 * functions whose bundle changed. A rebuild that fails writes nothing (esbuild prints why), so the
 * functions keep their last good bundle. Throws when the first build fails.
 */
export async function watchedBundles(options: {
  dir: string;
  root?: string;
  functions?: readonly FunctionName[];
  say: (line: string) => void;
}): Promise<LocalBundles> {
  const { dir, say } = options;
  const names = options.functions ?? (Object.keys(FUNCTIONS) as FunctionName[]);
  mkdirSync(dir, { recursive: true });
  let listener: (changed: FunctionName[]) => void = () => undefined;
  let hashes = new Map<FunctionName, string>();
  let first = true;
  let firstBuilt!: (errors: number) => void;
  const firstBuild = new Promise<number>((resolve) => {
    firstBuilt = resolve;
  });
  const notify: Plugin = {
    name: 'local-stack-rebuild',
    setup(b) {
      b.onEnd((result) => {
        if (first) {
          first = false;
          hashes = bundleHashes(dir, names);
          firstBuilt(result.errors.length);
          return;
        }
        if (result.errors.length > 0) {
          say('rebuild failed (esbuild says why above); the functions keep running their last good build.');
          return;
        }
        const next = bundleHashes(dir, names);
        const changed = [...next].filter(([name, hash]) => hashes.get(name) !== hash).map(([name]) => name);
        hashes = next;
        if (changed.length > 0) {
          say(`rebuilt ${changed.join(', ')}: their next events run the new code.`);
          listener(changed);
        }
      });
    },
  };
  const base = functionsBuildOptions(dir, options.root, names);
  const ctx = await context({ ...base, plugins: [...(base.plugins ?? []), notify] });
  // Watching builds once first, then again at each change.
  await ctx.watch();
  if ((await firstBuild) > 0 || hashes.size < names.length) {
    await ctx.dispose();
    throw new Error('the functions could not be built (esbuild says why above)');
  }
  // The MCP App view beside the MCP bundle, as `npm run build` puts it; it is no source of a
  // bundle, so a change to it is seen at the next start.
  if (names.includes('mcp')) await buildViews(join(dir, 'mcp'));
  return {
    dir,
    onChange(next) {
      listener = next;
    },
    stop: () => ctx.dispose(),
  };
}
