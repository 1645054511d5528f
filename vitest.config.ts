import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    env: { AGENTRUN_LOG_LEVEL: process.env.AGENTRUN_LOG_LEVEL ?? 'error' },
    projects: [
      // Pure parts and single-process tests against the shared servers: two files at a time.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'test/workflow/**/*.test.ts'], maxWorkers: 2, sequence: { groupOrder: 0 } } },
      // Integration files each start Temporal workers (and kill some): on two cores, one file at a time, after the unit files.
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
