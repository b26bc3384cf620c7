import { defineConfig } from 'vitest/config';

// One run, two projects: fast unit tests next to the code, and end-to-end suites in test/ that start real
// processes (gateway, agents, browsers). The summary reporter prints the plain line CI reads.
export default defineConfig({
  test: {
    reporters: ['default', './tools/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts'],
          // Unit tests run first, then the end-to-end suites (projects with different maxWorkers need their own group).
          sequence: { groupOrder: 0 },
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Each suite starts real gateways, agents and sometimes a browser: one suite at a time keeps a 2-core
          // machine responsive enough that process start-ups stay far from their timeouts.
          maxWorkers: 1,
          fileParallelism: false,
        },
      },
    ],
  },
});
