import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { functionsBuildOptions, NODE_BUNDLE, ROOT } from '../../infra/build.js';
import { buildViews } from '../../infra/build-views.js';
import { runtimeClientModule } from '../../local/lambda/bundles.js';
import { removedAtEnd } from './scratch-setup.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder holding `npm start`'s and the CLIs' entry points compiled once for this run (see below). */
    localBuildDir: string;
    /** The functions' bundles built once for this run, as `npm run build` builds them (`<dir>/<function>/index.mjs`). */
    functionBundlesDir: string;
  }
}

/** The entry points the end-to-end tests start as processes of their own. */
const LOCAL_ENTRIES = ['start', 'token-cli', 'seed-cli', 'audit-cli'] as const;

/**
 * Global setup of the `service` test project: bundles `npm start` and the CLIs (local/*.ts)
 * once per run into one ES module each, packages included, so the many processes the end-to-end
 * files start each load one file instead of having tsx resolve and transform our modules and Node
 * resolve thousands of package files again in each. Measured: a CLI 0.51 s of CPU with the
 * packages left to Node, 0.19 s bundled (0.77 s through tsx); the four process-heavy files (cli,
 * cli-usage, start, start-lifecycle) 66 s of CPU to 45 s, 3 runs each. Same source, same
 * transform (tsx is esbuild too; the Lambda bundles are esbuild bundles of the same packages).
 * What a user's Node and npm do is still proven where it matters: the stop-signal tests start
 * `npm run -s start`, cli-usage runs `npm run -s seed` and `npm run -s token`, and the
 * Node-version test runs the audit CLI through the tsx binary. The folder sits under node_modules
 * so that what stays outside the bundles resolves to the project's packages (dynalite, which
 * local/engine.ts loads with its own `require`); it is removed after the run, Ctrl-C included.
 *
 * The functions' bundles are built here too, once, with `npm run build`'s options (infra/build.ts
 * functionsBuildOptions), and every stack of the run (in-process, or `npm start` with
 * LAMBDA_BUNDLES) runs them in its sandboxes, as `npm start` runs the ones it builds itself; so is
 * the runtime client the sandboxes start.
 */
/** Set once the run's build exists: another project's copy of this setup hands the same folders over. */
const BUILT = 'ENDPOINT_READ_TEST_LOCAL_BUILD';

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const built = process.env[BUILT];
  if (built) {
    project.provide('localBuildDir', built);
    project.provide('functionBundlesDir', join(built, 'functions'));
    return undefined;
  }
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const outdir = mkdtempSync(join(cache, 'local-build-'));
  const compile = () =>
    build({
      // Bundled as the functions are, ESM builds of the packages included (measured in turn against
      // their CommonJS builds: the audit CLI 0.84x the CPU in 15 runs each, `npm start` 0.90x in 12).
      ...NODE_BUNDLE,
      entryPoints: LOCAL_ENTRIES.map((name) => join(ROOT, 'local', `${name}.ts`)),
      // esbuild finds its own binary from where its package is: left to the project's copy.
      external: ['esbuild'],
      outdir,
      outExtension: { '.js': '.mjs' },
      logLevel: 'warning',
    });
  const functionsDir = join(outdir, 'functions');
  // The functions' bundles, and the MCP App view beside the MCP bundle, as `npm run build` makes them.
  const compileFunctions = async () => {
    await build(functionsBuildOptions(functionsDir));
    await buildViews(join(functionsDir, 'mcp'));
  };
  await Promise.all([compile(), compileFunctions(), runtimeClientModule()]);
  // In watch mode, each rerun compiles again, so a change under local/, lib/ or functions/ is what the processes run.
  project.onTestsRerun(async () => {
    await Promise.all([compile(), compileFunctions(), runtimeClientModule()]);
  });
  project.provide('localBuildDir', outdir);
  project.provide('functionBundlesDir', functionsDir);
  process.env[BUILT] = outdir;
  return removedAtEnd(outdir);
}
