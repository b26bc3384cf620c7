import { describe, expect, test } from 'vitest';
import { mayStreamBeforeAnswer } from './mcp-endpoint';

const call = (meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'machines_list', arguments: {}, ...(meta ? { _meta: meta } : {}) },
});

describe('mayStreamBeforeAnswer', () => {
  test('a plain tools/call and every other request are answered as JSON', () => {
    expect(mayStreamBeforeAnswer(call(), {})).toBe(false);
    expect(mayStreamBeforeAnswer({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { logLevel: 'debug' })).toBe(false);
    expect(mayStreamBeforeAnswer([{ jsonrpc: '2.0', id: 2, method: 'ping' }, call()], {})).toBe(false);
  });

  test('a call asking for progress, in a logging session or one that can be sent an elicitation may stream', () => {
    expect(mayStreamBeforeAnswer(call({ progressToken: 7 }), {})).toBe(true);
    expect(mayStreamBeforeAnswer(call({ progressToken: 0 }), {})).toBe(true);
    expect(mayStreamBeforeAnswer(call(), { logLevel: 'error' })).toBe(true);
    expect(mayStreamBeforeAnswer(call(), { elicitationUrl: true })).toBe(true);
    expect(mayStreamBeforeAnswer([{ jsonrpc: '2.0', id: 2, method: 'ping' }, call({ progressToken: 'p' })], {})).toBe(
      true,
    );
  });
});
