import { defineConfig } from 'vitest/config';

// The unit files run two at a time, first; then the integration files one at a time: each starts
// Temporal workers, child workers and sandboxes, and on two cores their heartbeats and host timeouts
// must not share the CPU with another file's. Both projects share one Temporal server and one
// PostgreSQL (test/global-setup.ts starts them for the first project and stops them after the last).
export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    reporters: ['default', './test/helpers/unprivileged-reporter.ts'],
    env: { AGENTRUN_LOG_LEVEL: process.env.AGENTRUN_LOG_LEVEL ?? 'error' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/workflow/**/*.test.ts'],
          // It starts its own Temporal and PostgreSQL and times them: with the integration files.
          exclude: ['test/unit/infra.test.ts'],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/unit/infra.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
