import type { TestProject } from 'vitest/node';
import { packageTemplate, removePackage, type PackagedTemplate } from './package.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The template `npm run package` wrote, packaged once per run for every template test file. */
    packagedTemplate: PackagedTemplate;
  }
}

/**
 * Global setup of the `template` test project (vitest.config.ts): packages the template once, before
 * the template test files run, and removes it after them. Vitest calls it only when a template test
 * is queued, so a run of other files never packages.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const packaged = await packageTemplate();
  project.provide('packagedTemplate', packaged);
  return () => removePackage(packaged);
}
