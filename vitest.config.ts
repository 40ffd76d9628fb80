import './infra/local/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (README, Node versions)
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file starts its own engine and listeners on ephemeral ports; forks keep process.env apart.
    pool: 'forks',
    env: {
      // Handlers log JSON on every request; tests read responses, not logs (a test may turn them back on).
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_DEV: 'false',
      // One EMF line per request is for CloudWatch; test/infra turns metrics back on where it checks them.
      POWERTOOLS_METRICS_DISABLED: 'true',
    },
  },
});
