import { describe, expect, test } from 'vitest';
import { DEFAULT_ACCOUNT_SETTINGS } from '../store/policy-store';
import { refuseDisabledToolGroup, refuseDisabledTransport, TRANSPORT_HEADER, transportOf } from './account-switches';

const settings = (change: Partial<typeof DEFAULT_ACCOUNT_SETTINGS>) => ({ ...DEFAULT_ACCOUNT_SETTINGS, ...change });
const codeOf = (fn: () => void) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe('account switches', () => {
  test('the stdio bridge is told apart by its header; anything else is MCP over HTTP', () => {
    const req = (headers: Record<string, string>) => new Request('http://x/mcp', { headers });
    expect(transportOf(req({}))).toBe('mcp_http');
    expect(transportOf(req({ [TRANSPORT_HEADER]: 'stdio' }))).toBe('stdio_bridge');
    expect(transportOf(req({ [TRANSPORT_HEADER]: ' STDIO ' }))).toBe('stdio_bridge');
    expect(transportOf(req({ [TRANSPORT_HEADER]: 'sse' }))).toBe('mcp_http');
  });

  test('a transport switched off is refused with forbidden naming the switch', () => {
    expect(codeOf(() => refuseDisabledTransport(settings({}), 'mcp_http'))).toBe('ok');
    expect(codeOf(() => refuseDisabledTransport(settings({ mcpHttp: false }), 'mcp_http'))).toBe('forbidden');
    expect(codeOf(() => refuseDisabledTransport(settings({ mcpHttp: false }), 'stdio_bridge'))).toBe('ok');
    expect(codeOf(() => refuseDisabledTransport(settings({ stdioBridge: false }), 'stdio_bridge'))).toBe('forbidden');
    expect(codeOf(() => refuseDisabledTransport(settings({ legacySse: false }), 'legacy_sse'))).toBe('forbidden');
  });

  test('a tool group switched off refuses its tools with blocked_by_policy; base tools stay', () => {
    const off = settings({ disabledToolGroups: ['commands'] });
    expect(codeOf(() => refuseDisabledToolGroup(off, 'exec'))).toBe('blocked_by_policy');
    expect(codeOf(() => refuseDisabledToolGroup(off, 'shell_run'))).toBe('blocked_by_policy');
    expect(codeOf(() => refuseDisabledToolGroup(off, 'read_file'))).toBe('ok');
    expect(codeOf(() => refuseDisabledToolGroup(off, 'machines_list'))).toBe('ok');
    expect(codeOf(() => refuseDisabledToolGroup(off, 'approval_wait'))).toBe('ok');
  });
});
