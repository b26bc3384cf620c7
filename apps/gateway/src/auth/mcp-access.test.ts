import { expect, test } from 'vitest';
import { bearerChallenge, mcpOriginAllowed, stepUpScope } from './mcp-access';
import type { Principal } from './principal';

const publicUrl = 'http://localhost:8787';

test.each<[string | undefined, string[], boolean]>([
  [undefined, [], true],
  ['http://localhost:8787', [], true],
  ['http://evil.example', [], false],
  ['http://localhost:8788', [], false],
  ['null', [], false],
  ['https://inspector.example', ['https://inspector.example'], true],
])('origin %s with allow-list %j is allowed: %s', (origin, allowed, expected) => {
  expect(mcpOriginAllowed(origin, publicUrl, allowed)).toBe(expected);
});

test('the 401 challenge names the path-inserted protected-resource metadata', () => {
  expect(bearerChallenge(publicUrl)).toBe(
    'Bearer resource_metadata="http://localhost:8787/.well-known/oauth-protected-resource/mcp"',
  );
  expect(bearerChallenge(publicUrl, { error: 'invalid_token', description: 'say "no"' })).toContain(
    'error="invalid_token", error_description="say no"',
  );
});

const connection = (scopes: Principal['grant']['scopes']): Principal => ({
  kind: 'connection',
  credentialId: 'con_1',
  accountId: 'acc',
  userId: 'usr',
  role: 'member',
  grant: { policy: 'full', machines: '*', scopes },
  actor: 'connection:con_1',
});
const call = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });

test('a call outside the scopes asks for the scopes it has plus the missing group', () => {
  const p = connection(['machines_list', 'approval_wait', 'read_file', 'list_dir']);
  expect(stepUpScope(p, call('exec'))).toBe('commands files');
  expect(stepUpScope(p, [call('read_file'), call('write_file')])).toBe('files');
});

test.each([
  ['a tool in scope', connection(['read_file']), call('read_file')],
  ['an unknown tool', connection(['read_file']), call('rm_everything')],
  ['a base tool', connection([]), call('machines_list')],
  ['not a tool call', connection([]), { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  ['an API token', { ...connection(['read_file']), kind: 'api_token' as const }, call('exec')],
  ['a grant of every tool', connection('*'), call('exec')],
])('%s needs no step-up', (_what, principal, message) => {
  expect(stepUpScope(principal, message)).toBeNull();
});
