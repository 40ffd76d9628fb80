import type { TestProject } from 'vitest/node';
import { removePackage, startPackaging } from './package.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder `npm run package` writes into, once per run, for every template and build test file (wait for it with packagedTemplate). */
    packagingDir: string;
  }
}

/**
 * Global setup of the `template` test project (vitest.config.ts): starts packaging the template
 * once and hands its folder to the template test files, which wait for it (packagedTemplate);
 * the other files run meanwhile instead of waiting the packaging out. Removes the folder after the
 * run. Vitest calls it only when a template test is queued, so a run of other files never packages.
 */
export default function setup(project: TestProject): () => Promise<void> {
  const { outDir, ended } = startPackaging();
  project.provide('packagingDir', outDir);
  return async () => {
    await ended;
    removePackage(outDir);
  };
}
