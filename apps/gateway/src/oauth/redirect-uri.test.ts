import { expect, test } from 'vitest';
import { assertRegistrableRedirectUri, redirectTarget, redirectUriMatches } from './redirect-uri';

test.each<[string, string[], boolean]>([
  ['https://app.example/cb', ['https://app.example/cb'], true],
  ['https://app.example/cb/', ['https://app.example/cb'], false],
  ['https://app.example/cb?x=1', ['https://app.example/cb'], false],
  ['https://app.example:8443/cb', ['https://app.example/cb'], false],
  ['https://evil.example/cb', ['https://app.example/cb'], false],
  ['http://127.0.0.1:53682/callback', ['http://127.0.0.1/callback'], true],
  ['http://127.0.0.1:53682/callback', ['http://127.0.0.1:1234/callback'], true],
  ['http://localhost:9999/cb', ['http://localhost:3000/cb'], true],
  ['http://[::1]:9999/cb', ['http://[::1]/cb'], true],
  ['http://localhost:9999/other', ['http://localhost:3000/cb'], false],
  ['http://127.0.0.1:9999/cb', ['http://localhost:3000/cb'], false],
  ['http://localhost.evil.example:9999/cb', ['http://localhost:3000/cb'], false],
  ['https://localhost:9999/cb', ['https://localhost:3000/cb'], false],
  ['cursor://anysphere.cursor/oauth', ['cursor://anysphere.cursor/oauth'], true],
  ['not a uri', ['https://app.example/cb'], false],
])('%s against %j matches: %s', (requested, registered, expected) => {
  expect(redirectUriMatches(requested, registered)).toBe(expected);
});

test.each([
  'https://app.example/cb',
  'http://127.0.0.1/cb',
  'http://localhost:3000/cb',
  'http://[::1]:8080/',
  'cursor://anysphere.cursor/oauth',
])('%s may be registered', (uri) => {
  expect(() => assertRegistrableRedirectUri(uri)).not.toThrow();
});

test.each([
  'http://app.example/cb',
  'https://app.example/cb#frag',
  'javascript:alert(1)',
  'data:text/html,hi',
  'file:///etc/passwd',
  '/relative/cb',
  'https://user:pw@app.example/cb',
])('%s is refused with invalid_params', (uri) => {
  expect(() => assertRegistrableRedirectUri(uri)).toThrow(expect.objectContaining({ code: 'invalid_params' }));
});

test('the consent page names the redirect host, or a native app scheme', () => {
  expect(redirectTarget('https://claude.ai/api/mcp/auth_callback')).toBe('claude.ai');
  expect(redirectTarget('http://127.0.0.1:33418/')).toBe('127.0.0.1:33418');
  expect(redirectTarget('cursor://anysphere.cursor/oauth')).toBe('cursor://anysphere.cursor');
});
