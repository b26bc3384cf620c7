import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { exec, execInput } from './exec';
import { execMany } from './exec-many';
import { jobStartInput, jobTools } from './jobs';
import { shellRun } from './shell-run';
import { terminalTools } from './terminals';

const tools = [execMany, shellRun, ...jobTools, ...terminalTools];

describe('exec_many, shell_run, job and terminal tools', () => {
  // Which tools are gated, their names, annotations and confirm arguments are the published contract, pinned by
  // the gateway's tools/list snapshot (apps/gateway/src/mcp/published-tools.test.ts); a second copy here only
  // failed on every intended change. What stays is the rule that holds for any gated tool.
  test('every gated tool answers the approval errors', () => {
    const gated = tools.filter((t) => t.gated);
    expect(gated.length).toBeGreaterThan(0);
    for (const t of gated) {
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
