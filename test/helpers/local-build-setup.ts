import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { ROOT } from '../../infra/build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder holding `npm start`'s and the CLIs' entry points compiled once for this run (see below). */
    localBuildDir: string;
  }
}

/** The entry points the end-to-end tests start as processes of their own. */
const LOCAL_ENTRIES = ['start', 'token-cli', 'seed-cli', 'audit-cli'] as const;

/**
 * Global setup of the `service` test project: compiles `npm start` and the CLIs (infra/local/*.ts)
 * once per run into one ES module each, the packages left to Node, so the many processes the
 * end-to-end files start load one file of our code instead of having tsx resolve and transform
 * every module again in each (measured: a CLI 0.77 s to 0.38 s, a start 1.35 s to 0.84 s). Same
 * source, same transform (tsx is esbuild too); the files that prove the scripts as npm runs them
 * (`npm run -s start`, the Node-version notice through the tsx binary) still start them so.
 * The folder sits under node_modules so that the bundles' bare imports resolve to the project's
 * packages; it is removed after the run.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const outdir = mkdtempSync(join(cache, 'local-build-'));
  const compile = () =>
    build({
      entryPoints: LOCAL_ENTRIES.map((name) => join(ROOT, 'infra', 'local', `${name}.ts`)),
      outdir,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      packages: 'external',
      platform: 'node',
      target: 'node20',
      format: 'esm',
      logLevel: 'warning',
    });
  await compile();
  // In watch mode, each rerun compiles again, so a change under infra/local/ is what the processes run.
  project.onTestsRerun(async () => {
    await compile();
  });
  project.provide('localBuildDir', outdir);
  return () => rmSync(outdir, { recursive: true, force: true });
}
