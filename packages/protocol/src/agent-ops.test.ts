import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  type AgentCallOp,
  type AgentOpParams,
  type AgentOpResult,
  type AgentStreamOp,
  agentOpNames,
  agentOps,
  isAgentOp,
} from './agent-ops';
import type { JobState } from './ops-jobs';

describe('the agent op registry', () => {
  test('every op has a params schema, a result schema and a shape', () => {
    expect(agentOpNames.length).toBeGreaterThan(0);
    for (const name of agentOpNames) {
      const spec = agentOps[name];
      expect(spec.params, name).toBeInstanceOf(z.ZodType);
      expect(spec.result, name).toBeInstanceOf(z.ZodType);
      expect(['call', 'chunks', 'stream'], name).toContain(spec.shape);
    }
  });

  test('names every op the gateway sends today, and only those', () => {
    expect([...agentOpNames].sort()).toEqual(
      [
        'exec',
        'shell_run',
        'job_start',
        'job_status',
        'job_output',
        'job_stop',
        'terminal_open',
        'terminal_send',
        'terminal_read',
        'terminal_text',
        'terminal_close',
        'read_file',
        'list_dir',
        'write_file',
        'delete_path',
        'git_status',
        'git_diff',
        'gui_observe',
        'gui_act',
        'transfer_send',
        'transfer_receive',
        'tunnel_connect',
        'wake_send',
      ].sort(),
    );
  });

  test('op names fit the request frame and are told apart from inherited object keys', () => {
    for (const name of agentOpNames) expect(name).toMatch(/^[a-z_]{1,64}$/);
    expect(isAgentOp('exec')).toBe(true);
    expect(isAgentOp('toString')).toBe(false);
    expect(isAgentOp('constructor')).toBe(false);
    expect(isAgentOp('rm_rf')).toBe(false);
  });

  test('params schemas refuse what is not an object, so the agent answers invalid_params', () => {
    for (const name of agentOpNames) {
      expect(agentOps[name].params.safeParse('not params').success, name).toBe(false);
      expect(agentOps[name].params.safeParse(null).success, name).toBe(false);
    }
  });

  test('a result the agent could not have produced fails its schema', () => {
    expect(agentOps.exec.result.safeParse({ exit_code: 'zero' }).success).toBe(false);
    expect(
      agentOps.exec.result.safeParse({ exit_code: 0, signal: null, duration_ms: 1, truncated: false, timed_out: false })
        .success,
    ).toBe(true);
    expect(agentOps.terminal_close.result.safeParse({ closed: true }).success).toBe(true);
    expect(agentOps.terminal_close.result.safeParse({}).success).toBe(false);
  });

  test('streamed ops are exactly the transfers and tunnel connections, and are kept out of plain calls', () => {
    expectTypeOf<AgentStreamOp>().toEqualTypeOf<'transfer_send' | 'transfer_receive' | 'tunnel_connect'>();
    expectTypeOf<'transfer_send'>().not.toMatchTypeOf<AgentCallOp>();
    expectTypeOf<'exec'>().toMatchTypeOf<AgentCallOp>();
    expect(agentOpNames.filter((n) => agentOps[n].shape === 'stream').sort()).toEqual([
      'transfer_receive',
      'transfer_send',
      'tunnel_connect',
    ]);
  });

  test('params are typed as sent (defaults optional) and results as validated', () => {
    expectTypeOf<AgentOpParams<'job_output'>>().toMatchTypeOf<{ job_id: string; offset?: number | undefined }>();
    expectTypeOf<AgentOpResult<'exec'>>().toHaveProperty('exit_code').toEqualTypeOf<number | null>();
    expectTypeOf<AgentOpResult<'job_status'>['state']>().toEqualTypeOf<JobState>();
  });
});
