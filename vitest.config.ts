import './infra/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
import { configDefaults, defineConfig } from 'vitest/config';
import { FUNCTION_ENVIRONMENT } from './test/helpers/function-environment.js';

/** The test files that check what `npm run package` writes: the bundles and zips under dist/, and the template. */
const PACKAGE_TESTS = ['test/infra/build.test.ts', 'test/infra/template-*.test.ts', 'test/infra/tenant-fence-iam.test.ts'];
/** Files that set process.env for modules that read it once, when they load (Powertools): each in a process of its own. */
const TESTS_WITH_ENV = [
  'test/unit/authorizer.test.ts',
  'test/unit/observability.test.ts',
  'test/unit/openapi.test.ts',
  'test/unit/tracer-loading.test.ts',
  'test/e2e/logging.test.ts',
];

export default defineConfig({
  test: {
    // Each project names its own files (vitest.dev: projects that `extends` concatenate lists).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // One scratch folder per run as the workers' TMPDIR, removed after it (every project runs it first).
    globalSetup: ['test/helpers/scratch-setup.ts'],
    // Each file starts its own engine and listeners on ephemeral ports; forks keep process.env apart.
    pool: 'forks',
    // Vitest's default is one worker per core less one: a single worker on these 2-core machines,
    // which leaves a core idle while a file waits on its engine, listeners or child processes.
    // On 2 idle cores one worker takes 190 s and two 136 s; three are faster in some runs and slower
    // in others, for 4% more CPU (docs/performance.md). Two: the deadline tests bound their answers
    // (a 1 s deadline answered within 1.4 s), and three workers on two cores leave those bounds less
    // room on a loaded machine.
    maxWorkers: 2,
    env: {
      // Handlers log JSON on every request; tests read responses, not logs (a test may turn them back on).
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_DEV: 'false',
      // One EMF line per request is for CloudWatch; the files that check the lines turn them back on.
      POWERTOOLS_METRICS_DISABLED: 'true',
      // The test stacks serve one tenant many requests a second: each tenant's throttle is raised for
      // them (the template's own rate and burst are checked in test/integration/local-gateway.test.ts,
      // and a stack with a small one in test/e2e/tenant-throttling.test.ts).
      TENANT_RATE_LIMIT: '100000',
      TENANT_BURST_LIMIT: '100000',
    },
    projects: [
      {
        // The files that read the build and the packaged template share one `npm run package` per
        // run, made by the project's global setup (only when one of them is queued) and handed over
        // with inject(). They change no environment that outlives a test and share a worker's
        // modules (measured, this project alone, 5 runs each in turn: 0.90x the CPU of a process per file).
        extends: true,
        test: { name: 'template', include: [...PACKAGE_TESTS], globalSetup: ['test/helpers/template-setup.ts'], isolate: false },
      },
      // The other unit files change no environment and no shared module: they share a worker's
      // modules rather than importing them again each (test/unit takes 10 s so, 22 s with a process per file).
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...TESTS_WITH_ENV],
          isolate: false,
          // The service's modules as a deployed function loads them (they read JWT_ISSUER and PUBLIC_URL at load).
          env: { ...FUNCTION_ENVIRONMENT },
        },
      },
      // The local build (test/helpers/local-build-setup.ts) serves the stacks these files start too.
      { extends: true, test: { name: 'own-process', include: [...TESTS_WITH_ENV], globalSetup: ['test/helpers/local-build-setup.ts'] } },
      {
        extends: true,
        // Its global setup bundles `npm start` and the CLIs once for the files that start them as processes.
        // Its files share a worker's modules too; each starts from the worker's first environment
        // and no cached configuration or client (test/helpers/shared-worker-setup.ts).
        test: {
          name: 'service',
          globalSetup: ['test/helpers/local-build-setup.ts'],
          setupFiles: ['test/helpers/shared-worker-setup.ts'],
          isolate: false,
          include: ['test/{e2e,integration,infra}/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...PACKAGE_TESTS, ...TESTS_WITH_ENV],
        },
      },
    ],
  },
});
