import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure logic beside the code, and the repository-wide policy checks of
// test/policy/) and `integration` (real Kafka and InfluxDB started by deploy/local through the
// global setup). `npm test` runs both.
export default defineConfig({
  test: {
    // Stopping Kafka cleanly can take up to 30 s on a loaded 2-core machine.
    teardownTimeout: 60_000,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{contracts,service,model,analysis,protocol,collector,estimator,dashboards,cli,deploy,bench,kernels,python}/**/*.test.ts', 'test/policy/**/*.test.ts'],
          exclude: ['**/node_modules/**', '**/*.int.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.int.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
