// After the run: how many tests ran a worker as the unprivileged user (those whose describe names
// it, as every such block does), so CI's output shows the boundary was tried as a non-root worker;
// then the run's counts in the plain closing form CI reads.
import type { Reporter, TestModule } from 'vitest/node';
import { UNPRIVILEGED_TEST_USER } from './prerequisites.js';

export default class RunCounts implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const all = { passed: 0, failed: 0, skipped: 0 };
    const unprivileged = { passed: 0, failed: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const { state } = test.result();
        const counted = state === 'passed' || state === 'failed' ? state : 'skipped';
        all[counted] += 1;
        if (counted !== 'skipped' && /unprivileged user/.test(test.fullName)) unprivileged[counted] += 1;
      }
    }
    console.log(
      `${unprivileged.passed + unprivileged.failed} tests ran a worker as the unprivileged user '${UNPRIVILEGED_TEST_USER}'; of them ${unprivileged.passed} passed and ${unprivileged.failed} failed`,
    );
    console.log(`tests: ${all.passed} passed, ${all.failed} failed, ${all.skipped} skipped`);
  }
}
