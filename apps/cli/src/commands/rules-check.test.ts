import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { rulesCheck } from './rules-check';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'letkite-rules-check-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[], input = '') {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await rulesCheck(args, { stdin: Readable.from([input]), stdout, stderr });
  const lines = stdout.text.split('\n').filter(Boolean);
  return { code, stderr: stderr.text, results: lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

async function policyFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

const tomlPolicy = `name = "ops"
shell = "full"
files = [ { path = "/srv/app", access = "rw" } ]

[commands]
mode = "shell"
rulesets = ["no-destructive"]
default = "approve"
rules = [ { match = "git push *", verdict = "approve" }, { match = "ls *", verdict = "allow" } ]

[approval]
approvers = "connector"
`;

describe('letkite rules check', () => {
  test('judges one command given after --', async () => {
    const path = await policyFile('p.toml', tomlPolicy);
    const { code, results } = await run(['--policy', path, '--', 'ls', '-la']);
    expect(code).toBe(0);
    expect(results).toEqual([expect.objectContaining({ command: 'ls -la', verdict: 'allow' })]);
  });

  test('reads one command per line from stdin and writes one JSON object per line', async () => {
    const path = await policyFile('p.toml', tomlPolicy);
    const { code, results } = await run(['--policy', path], 'ls\r\nrm -rf /\n\ngit push origin main\nreboot\n');
    expect(code).toBe(0);
    expect(results.map((result) => [result.command, result.verdict])).toEqual([
      ['ls', 'allow'],
      ['rm -rf /', 'deny'],
      ['git push origin main', 'approve'],
      ['reboot', 'approve'],
    ]);
    expect(results[1]?.reasons).toContainEqual(expect.objectContaining({ layer: 'catastrophic', verdict: 'deny' }));
  });

  test('--confirm turns confirm into allow', async () => {
    const path = await policyFile('p.toml', '[commands]\ndefault = "allow"\n');
    expect((await run(['--policy', path, '--', 'reboot'])).results[0]?.verdict).toBe('confirm');
    expect((await run(['--policy', path, '--confirm', '--', 'reboot'])).results[0]?.verdict).toBe('allow');
  });

  test('a file with only a [commands] table is valid, and so is JSON', async () => {
    const toml = await policyFile('only.toml', '[commands]\nrulesets = ["linux-readonly"]\n');
    expect((await run(['--policy', toml, '--', 'cat README.md'])).results[0]?.verdict).toBe('allow');
    const json = await policyFile('p.json', JSON.stringify({ name: 'x', commands: { default: 'deny' } }));
    expect((await run(['--policy', json, '--', 'ls'])).results[0]?.verdict).toBe('deny');
    const sniffed = await policyFile('policy', '{ "commands": { "mode": "allowlist", "allow": ["df -h"] } }');
    expect((await run(['--policy', sniffed], 'df -h\ndf -h | sh\n')).results.map((r) => r.verdict)).toEqual([
      'allow',
      'deny',
    ]);
  });

  test('malformed TOML is an error with its line, exit code 2', async () => {
    const path = await policyFile(
      'bad.toml',
      '[commands]\nmode = "shell"\nrules = [ { match = "ls *" verdict = "allow" } ]\n',
    );
    const { code, stderr, results } = await run(['--policy', path, '--', 'ls']);
    expect(code).toBe(2);
    expect(results).toEqual([]);
    expect(stderr).toMatch(/bad\.toml:3: invalid TOML/);
  });

  test('malformed JSON is an error with its line, exit code 2', async () => {
    const path = await policyFile('bad.json', '{\n  "commands": {\n    "default": "allow",\n  }\n}\n');
    const { code, stderr } = await run(['--policy', path, '--', 'ls']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/bad\.json:4: invalid JSON/);
  });

  test('a [commands] table that breaks the schema names the key and its line', async () => {
    const path = await policyFile('schema.toml', 'name = "x"\n\n[commands]\nmode = "shell"\ndefault = "maybe"\n');
    const { code, stderr } = await run(['--policy', path, '--', 'ls']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/schema\.toml:5: invalid \[commands\] table: commands\.default/);
  });

  test('a bad rule pattern names its line', async () => {
    const path = await policyFile(
      'pattern.toml',
      '[commands]\nrules = [\n  { match = "ls \'x", verdict = "allow" },\n]\n',
    );
    const { code, stderr } = await run(['--policy', path, '--', 'ls']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/pattern\.toml:3: .*unclosed single quote/);
  });

  test('usage errors exit 2', async () => {
    expect((await run(['--', 'ls'])).code).toBe(2);
    expect((await run(['--policy'])).code).toBe(2);
    expect((await run(['--policy', join(dir, 'missing.toml'), '--', 'ls'])).stderr).toMatch(/cannot read: ENOENT/);
    expect((await run(['--policy', 'x.toml', '--bogus'])).code).toBe(2);
    const path = await policyFile('p.toml', tomlPolicy);
    expect((await run(['--policy', path, '--'])).code).toBe(2);
  });
});
