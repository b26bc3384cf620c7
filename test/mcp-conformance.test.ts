import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';

const script = join(import.meta.dirname, '..', 'tools', 'conformance', 'run.sh');

/**
 * The official MCP conformance suite (server scenarios) against a real gateway and agent, through
 * tools/conformance/run.sh: it installs the suite and Node 22 from npm into a scratch folder outside the checkout
 * (kept between runs), and fails on any failure not in tools/conformance/baseline.yml — or on a listed one that
 * passes. About a minute once installed.
 */
test('the MCP conformance suite passes but for the baseline (reference-server-only scenarios)', async () => {
  const child = spawn('bash', [script], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const summary = out.slice(out.indexOf('=== SUMMARY ==='));
  expect(code, summary || out.slice(-4000)).toBe(0);
  expect(out).toContain('Baseline check passed');
  // The scenarios LetKite's own features answer must be among the passes, not merely absent.
  for (const scenario of [
    'server-initialize',
    'logging-set-level',
    'completion-complete',
    'tools-list',
    'tools-call-error',
    'resources-list',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
  ]) {
    expect(summary).toMatch(new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`));
  }
}, 600_000);
