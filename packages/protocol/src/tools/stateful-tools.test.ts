import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { execMany } from './exec-many';
import { jobTools } from './jobs';
import { shellRun } from './shell-run';
import { terminalTools } from './terminals';

const tools = [execMany, shellRun, ...jobTools, ...terminalTools];

describe('exec_many, shell_run, job and terminal tools', () => {
  test('carry the DESIGN §7 names', () => {
    expect(tools.map((t) => t.name)).toEqual([
      'exec_many',
      'shell_run',
      'job_start',
      'job_status',
      'job_output',
      'job_stop',
      'terminal_open',
      'terminal_send',
      'terminal_read',
      'terminal_wait',
      'terminal_close',
    ]);
  });

  test('annotations are honest: only status, output, read and wait are read-only', () => {
    const readOnly = ['job_status', 'job_output', 'terminal_read', 'terminal_wait'];
    for (const t of tools) {
      expect(t.annotations.readOnlyHint, t.name).toBe(readOnly.includes(t.name));
      expect(t.annotations.destructiveHint, t.name).toBe(!readOnly.includes(t.name));
    }
    expect(jobTools.find((t) => t.name === 'job_stop')?.annotations.idempotentHint).toBe(true);
    expect(shellRun.annotations.idempotentHint).toBe(false);
  });

  test('only tools that run a judged command take confirm', () => {
    const withConfirm = tools.filter((t) => 'confirm' in t.input.shape).map((t) => t.name);
    expect(withConfirm).toEqual(['exec_many', 'shell_run', 'job_start']);
  });

  test('the tools DESIGN §6 lets need a human are gated and answer the approval errors', () => {
    const gated = tools.filter((t) => t.gated).map((t) => t.name);
    expect(gated).toEqual(['exec_many', 'shell_run', 'job_start', 'terminal_open']);
    for (const t of tools.filter((t) => t.gated)) {
      expect(t.errors, t.name).toEqual(
        expect.arrayContaining(['approval_denied', 'approval_expired', 'too_many_pending_approvals']),
      );
    }
  });

  test('terminal_wait is bounded to 60 s and job_output pages to 60,000 bytes', () => {
    const wait = terminalTools.find((t) => t.name === 'terminal_wait');
    expect(
      wait?.input.safeParse({ machine: 'm', terminal_id: 'term_abcdefgh', pattern: 'x', timeout_s: 61 }).success,
    ).toBe(false);
    const output = jobTools.find((t) => t.name === 'job_output');
    expect(output?.input.safeParse({ machine: 'm', job_id: 'job_abcdefgh', size: 60_001 }).success).toBe(false);
    expect(output?.input.safeParse({ machine: 'm', job_id: '../../etc' }).success).toBe(false);
  });

  test('published JSON Schemas (a change here is a contract change)', () => {
    const published = Object.fromEntries(
      tools.map((t) => [t.name, { input: z.toJSONSchema(t.input, { io: 'input' }), output: z.toJSONSchema(t.output) }]),
    );
    expect(published).toMatchSnapshot();
  });
});
