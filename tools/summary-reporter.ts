import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints `N passed, N failed, N skipped` alone on a line at the end of a run: CI reads that line, not vitest's own
 * closing lines.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A module that failed to load has no tests; count it so a broken suite cannot look green.
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
