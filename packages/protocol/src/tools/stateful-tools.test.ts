import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { exec, execInput } from './exec';
import { execMany } from './exec-many';
import { jobStartInput, jobTools } from './jobs';
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
});

describe('tool inputs', () => {
  test('exactly one of command or argv (and of machines or label) is validated by the schema itself', () => {
    for (const input of [execInput, jobStartInput]) {
      expect(input.safeParse({ machine: 'm', command: 'ls' }).success).toBe(true);
      expect(input.safeParse({ machine: 'm', argv: ['ls'] }).success).toBe(true);
      for (const both of [{ machine: 'm' }, { machine: 'm', command: 'ls', argv: ['ls'] }]) {
        const issues = input.safeParse(both).error?.issues ?? [];
        expect(issues.map((i) => i.message)).toEqual(['give exactly one of "command" or "argv"']);
      }
    }
    expect(execMany.input.safeParse({ machines: ['a'], label: 'x', command: 'ls' }).success).toBe(false);
    expect(execMany.input.safeParse({ label: 'x', argv: ['ls'] }).success).toBe(true);
  });

  test('unknown keys are refused by every tool input, naming the key', () => {
    for (const tool of [...tools, exec]) {
      const issues = tool.input.safeParse({ machine: 'm', command: 'ls', timeout: 5 }).error?.issues ?? [];
      expect(
        issues.find((i) => i.code === 'unrecognized_keys'),
        tool.name,
      ).toMatchObject({ keys: expect.arrayContaining(['timeout']) });
    }
  });

  test('the published rule has no top-level oneOf, anyOf or allOf (the Anthropic API refuses such tools)', () => {
    for (const tool of [...tools, exec]) {
      const schema = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
      for (const key of ['oneOf', 'anyOf', 'allOf']) expect(schema, tool.name).not.toHaveProperty(key);
    }
    expect(z.toJSONSchema(execInput, { io: 'input' })).toHaveProperty('not');
  });
});
