import { defineConfig } from 'vitest/config';

// Three groups, one after the other, sharing one Temporal server and one PostgreSQL
// (test/global-setup.ts starts them for the first project and stops them after the last):
// the unit files two at a time; then the integration files two at a time; then, one at a time,
// the files that time a host out, kill or stop a worker mid-step, or time themselves, since on two
// cores another file's CPU would stretch their heartbeats and host timeouts.
const ALONE = [
  'test/integration/fleet.test.ts',
  'test/integration/fleet-host-loss.test.ts',
  'test/integration/environment.test.ts',
  'test/integration/fence.test.ts',
  'test/integration/crash.test.ts',
  'test/integration/subagents.test.ts',
  'test/integration/rollout.test.ts',
  'test/integration/pools.test.ts',
  'test/integration/mcp-fleet.test.ts',
  'test/integration/extensions-crash.test.ts',
  'test/integration/batch.test.ts',
  'test/integration/eval.test.ts',
  'test/integration/model-calls.test.ts',
  'test/integration/stall.test.ts',
  // It starts its own Temporal and PostgreSQL and times them.
  'test/unit/infra.test.ts',
];

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
          exclude: ['test/unit/infra.test.ts'],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: ALONE,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
