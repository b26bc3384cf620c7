import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { runCli } from '../main';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (d: Buffer) => {
    text += d.toString();
  });
  const code = await runCli(args, { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env });
  return { code, stderr: text };
}

function tokenFile(mode: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'letkite-tunnel-cli-'));
  dirs.push(dir);
  const file = join(dir, 'token');
  writeFileSync(file, 'lk_secret_value\n');
  chmodSync(file, mode);
  return file;
}

describe('letkite tunnel open', () => {
  test.each([
    [['tunnel'], 'no subcommand'],
    [['tunnel', 'open', 'alpha'], 'no target'],
    [['tunnel', 'open', 'alpha', '127.0.0.1:5432'], 'no --local'],
    [['tunnel', 'open', 'alpha', '127.0.0.1:5432', '--local', 'x'], 'a --local that is not a port'],
  ])('%j is a usage error (%s)', async (args) => {
    expect((await run(args)).code).toBe(2);
  });

  test('a token on the command line is not an option', async () => {
    const r = await run(['tunnel', 'open', 'alpha', '127.0.0.1:5432', '--local', '15432', '--token', 'lk_x']);
    expect(r.code).toBe(2);
  });

  test('a token file others can read is refused, and its content never shown', async () => {
    const r = await run(
      ['tunnel', 'open', 'alpha', '127.0.0.1:5432', '--local', '0', '--token-file', tokenFile(0o644)],
      {
        LETKITE_URL: 'http://127.0.0.1:1',
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('forbidden');
    expect(r.stderr).not.toContain('lk_secret_value');
  });
});
