import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Two cores: integration files each start Temporal workers; run files one at a time.
    fileParallelism: false,
    pool: 'forks',
    env: { AGENTRUN_LOG_LEVEL: process.env.AGENTRUN_LOG_LEVEL ?? 'error' },
  },
});
