import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { resolveBridgeConfig } from './mcp';

const dirs: string[] = [];
function configDir(mode: number): string {
  const root = mkdtempSync(join(tmpdir(), 'letkite-mcpcfg-'));
  dirs.push(root);
  const dir = join(root, 'letkite');
  mkdirSync(dir);
  chmodSync(dir, mode);
  return dir;
}
function writeConfig(dir: string, mode: number, body = { url: 'http://localhost:1', token: 'lk_file' }): string {
  const file = join(dir, 'mcp.json');
  writeFileSync(file, JSON.stringify(body));
  chmodSync(file, mode);
  return file;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('letkite mcp configuration', () => {
  test('reads url and token from a 0600 file in a 0700 directory', () => {
    const file = writeConfig(configDir(0o700), 0o600);
    expect(resolveBridgeConfig(file, {})).toEqual({ url: 'http://localhost:1', token: 'lk_file' });
  });

  test.each([0o644, 0o640, 0o604, 0o660])('refuses a token file with mode %o', (mode) => {
    const file = writeConfig(configDir(0o700), mode);
    expect(() => resolveBridgeConfig(file, {})).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });

  test('refuses a token file in a directory others can enter', () => {
    const file = writeConfig(configDir(0o755), 0o600);
    expect(() => resolveBridgeConfig(file, {})).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });

  test('the environment alone is enough, and wins over the default file', () => {
    const dir = configDir(0o700);
    writeConfig(dir, 0o600);
    const env = { XDG_CONFIG_HOME: join(dir, '..'), LETKITE_URL: 'http://gw', LETKITE_TOKEN: 'lk_env' };
    expect(resolveBridgeConfig(undefined, env)).toEqual({ url: 'http://gw', token: 'lk_env' });
    expect(
      resolveBridgeConfig(undefined, {
        LETKITE_URL: 'http://gw',
        LETKITE_TOKEN: 'lk_env',
        XDG_CONFIG_HOME: '/nonexistent',
      }),
    ).toEqual({
      url: 'http://gw',
      token: 'lk_env',
    });
  });

  test('a named config file that does not exist is not_found; nothing at all is a usage error', () => {
    expect(() => resolveBridgeConfig('/nonexistent/mcp.json', {})).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
    expect(() => resolveBridgeConfig(undefined, { XDG_CONFIG_HOME: '/nonexistent' })).toThrow(
      /needs a gateway URL and token/,
    );
  });
});
