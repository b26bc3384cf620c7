import { defineTool, errorCodes, LetKiteError } from '@letkite/protocol';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import type { GatewayDeps } from '../deps';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { mcpErrorOf, ToolErrorResult } from './error-map';
import { defineHandler, publishedTool, runTool, type ToolCallInput } from './tool-handler';

const echo = defineTool({
  name: 'echo_test',
  title: 'Echo',
  description: 'Echoes, or refuses with the code asked for.',
  input: z.strictObject({ text: z.string(), fail: z.enum(errorCodes).optional() }),
  output: z.object({ text: z.string() }),
  annotations: { readOnlyHint: true },
  errors: [],
});

const echoHandler = defineHandler(echo, async (input, ctx) => {
  ctx.audit.details = { text: input.text };
  if (input.fail) throw new LetKiteError(input.fail, `refused: ${input.text}`, { asked: input.fail });
  return { text: input.text };
});

describe('MCP adapter', () => {
  let store: SqliteStore;
  let call: ToolCallInput;
  let accountId: string;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    const { account, owner } = await store.bootstrap(new Date().toISOString());
    accountId = account.id;
    // The parts of the gateway a tool call's adapter uses: the store (redaction patterns, the audit), the clock, the log.
    const deps = { store, now: () => new Date(), log: () => {} } as unknown as GatewayDeps;
    call = {
      deps,
      principal: {
        kind: 'api_token',
        credentialId: 'tok_test',
        accountId: account.id,
        userId: owner.id,
        role: 'owner',
        grant: { policy: 'full', machines: '*', scopes: '*' },
        actor: 'token:tok_test',
      },
      signal: new AbortController().signal,
      progress: async () => {},
      audit: {},
    };
  });
  afterEach(async () => store.close());

  test('the error table maps every code', () => {
    expect(Object.keys(mcpErrorOf).sort()).toEqual([...errorCodes].sort());
  });

  test('a refused call carries { code, message, details } as structuredContent and the same JSON as text', async () => {
    for (const code of errorCodes) {
      const result = await runTool(echoHandler, { text: 'hi', fail: code }, { ...call, audit: {} });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toEqual({
        code,
        message: 'refused: hi',
        details: { asked: code },
        retryable: mcpErrorOf[code].retryable,
        ...(mcpErrorOf[code].hint ? { hint: mcpErrorOf[code].hint } : {}),
      });
      expect(JSON.parse(result.content[0]?.text ?? '')).toEqual(result.structuredContent);
      // What strict clients validate the structured answer against admits it.
      expect(ToolErrorResult.safeParse(result.structuredContent).success).toBe(true);
    }
  });

  test('an unknown argument is invalid_params naming the key, and is audited as such', async () => {
    const result = await runTool(echoHandler, { text: 'hi', timeout: 5 }, call);
    expect(result.structuredContent).toMatchObject({ code: 'invalid_params', retryable: false });
    expect(String(result.structuredContent?.message)).toContain('"timeout"');
    const audit = await store.listAudit(accountId, { limit: 5 });
    expect(audit[0]).toMatchObject({ action: 'tool.echo_test', actor: 'token:tok_test', outcome: 'invalid_params' });
  });

  test('a success is structuredContent plus text, audited with the credential as actor', async () => {
    const result = await runTool(echoHandler, { text: 'hello' }, call);
    expect(result).toEqual({
      content: [{ type: 'text', text: JSON.stringify({ text: 'hello' }, null, 2) }],
      structuredContent: { text: 'hello' },
    });
    const audit = await store.listAudit(accountId, { limit: 5 });
    expect(audit[0]).toMatchObject({ actor: 'token:tok_test', outcome: 'ok', details: { text: 'hello' } });
  });

  test('the published output schema admits the output and the refusal; the input is strict', () => {
    const published = publishedTool(echo);
    expect(published.inputSchema).toMatchObject({ additionalProperties: false });
    expect(published.outputSchema).toMatchObject({ type: 'object', anyOf: [{ type: 'object' }, { type: 'object' }] });
  });
});
