import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CEILING } from '@letkite/ceiling';
import { type AgentFrame, type AgentOp, agentOpNames, type RequestContext } from '@letkite/protocol';
import { afterAll, describe, expect, expectTypeOf, test } from 'vitest';
import type { CeilingState } from '../ceiling/ceiling-source';
import { RequestStream } from '../request-stream';
import { StatefulOps } from '../session-ops';
import { TempJournal } from '../transfers';
import { dispatchOp, type OpHandlers, opHandlers } from '.';

const stateDir = mkdtempSync(join(tmpdir(), 'letkite-ops-'));
const stateful = new StatefulOps(stateDir, () => undefined);
const handlers = opHandlers({ stateful, transfers: new TempJournal(null) });

afterAll(() => {
  stateful.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const ceiling: CeilingState = { source: 'defaults', ceiling: DEFAULT_CEILING, path: '/nonexistent/ceiling.toml' };
const context: RequestContext = { policy: {}, actor: 'token:test' };

function request(op: string, params: unknown) {
  const sent: AgentFrame[] = [];
  return {
    id: 'r1',
    op,
    params,
    context,
    ceiling,
    send: (f: AgentFrame) => sent.push(f),
    signal: new AbortController().signal,
    stream: new RequestStream(() => false),
  };
}

describe('the agent op dispatcher', () => {
  test('has a handler for every op of the protocol registry, and nothing else', () => {
    expectTypeOf<keyof OpHandlers>().toEqualTypeOf<AgentOp>();
    expect(Object.keys(handlers).sort()).toEqual([...agentOpNames].sort());
    for (const name of agentOpNames) expect(typeof handlers[name], name).toBe('function');
  });

  test('an op this agent does not know is unsupported, including names every object inherits', async () => {
    for (const op of ['rm_rf', 'toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      await expect(dispatchOp(handlers, request(op, {})), op).rejects.toMatchObject({ code: 'unsupported' });
    }
  });

  test('params that fail the registry schema are invalid_params naming the field, before any handler runs', async () => {
    await expect(dispatchOp(handlers, request('job_status', { job_id: 'not a handle' }))).rejects.toMatchObject({
      code: 'invalid_params',
      details: { issues: [expect.objectContaining({ path: 'job_id' })] },
    });
    await expect(dispatchOp(handlers, request('exec', null))).rejects.toMatchObject({ code: 'invalid_params' });
    await expect(
      dispatchOp(handlers, request('exec', { command: 'true', timeout_ms: -1, max_output_bytes: 10 })),
    ).rejects.toMatchObject({
      code: 'invalid_params',
      details: { issues: [expect.objectContaining({ path: 'timeout_ms' })] },
    });
  });

  test('valid params reach the op: its handler answers (an unknown job is not_found)', async () => {
    await expect(dispatchOp(handlers, request('job_status', { job_id: 'job_AAAAAAAAAAAAAAAA' }))).rejects.toMatchObject(
      {
        code: 'not_found',
      },
    );
    // The terminal manager checks the request's policy first ({} is none it accepts): its refusal, not the schema's.
    await expect(
      dispatchOp(handlers, request('terminal_close', { terminal_id: 'term_AAAAAAAAAAAAAAAA' })),
    ).rejects.toMatchObject({ code: 'blocked_by_policy' });
  });
});
