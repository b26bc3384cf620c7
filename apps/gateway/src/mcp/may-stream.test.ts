import { describe, expect, test } from 'vitest';
import { answerJsonOrStream, mayStreamBeforeAnswer } from './mcp-endpoint';

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

describe('answerJsonOrStream', () => {
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  const never = new Promise<void>(() => {});
  const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

  test('a quick answer is the JSON body itself', async () => {
    const answer = json({ jsonrpc: '2.0', id: 1, result: {} });
    expect(await answerJsonOrStream(Promise.resolve(answer), never)).toBe(answer);
  });

  test('a slow answer goes out as an SSE stream opened at once, one message event per response', async () => {
    const res = await answerJsonOrStream(
      later(
        400,
        json([
          { jsonrpc: '2.0', id: 1, result: {} },
          { jsonrpc: '2.0', id: 2, result: {} },
        ]),
      ),
      never,
    );
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":2,"result":{}}\n\n',
    );
  });

  test('a transport closed unanswered ends the stream without a message', async () => {
    const res = await answerJsonOrStream(new Promise<Response>(() => {}), later(300, undefined));
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toBe('');
  });
});
