import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'vitest';
import { callTool } from './letkite';

/**
 * Asserts, on the agent's machine, that no process's command line matches `pattern` (a `pgrep -f` regex). pgrep
 * runs from argv, without a shell whose own command line would hold the pattern. Only pgrep's exit code 1
 * means "nothing matched": 0 is a match, 2 and 3 are pgrep's own errors and 127 a missing pgrep, and none of
 * those may pass as "no process left" (REVIEW-architecture §7-1; .ci/run installs procps for pgrep).
 *
 * pgrep sees only its own PID namespace, and under the agent's Linux sandbox every command gets one: there a
 * survivor of an earlier command is invisible to it. So a test also gives the process it means a marker file to
 * write after a short sleep, and checks after that sleep that the file is absent; that check sees every case.
 */
export async function expectNoProcessMatching(client: Client, machine: string, pattern: string): Promise<void> {
  const r = await callTool<{ exit_code: number | null; stdout: string; stderr: string }>(client, 'exec', {
    machine,
    argv: ['pgrep', '-a', '-f', pattern],
  });
  expect(r.ok, JSON.stringify(r.error)).toBe(true);
  expect(r.data.exit_code, `pgrep -f ${pattern}: ${r.data.stdout}${r.data.stderr}`).toBe(1);
  expect(r.data.stdout).toBe('');
}

/** Sleeps for `ms` of real time: for the marker a surviving child would write after its short sleep. */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
