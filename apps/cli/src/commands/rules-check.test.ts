import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCaptured, tempDirEachTest } from '../testing';
import { rulesCheck } from './rules-check';

const tmp = tempDirEachTest('letkite-rules-check-');

async function run(args: string[], input = '') {
  const { code, stdout, stderr } = await runCaptured((io) => rulesCheck(args, io), { input });
  const lines = stdout.split('\n').filter(Boolean);
  return { code, stderr, results: lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

async function policyFile(name: string, text: string): Promise<string> {
  const path = join(tmp.path, name);
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
    expect((await run(['--policy', join(tmp.path, 'missing.toml'), '--', 'ls'])).stderr).toMatch(/cannot read: ENOENT/);
    expect((await run(['--policy', 'x.toml', '--bogus'])).code).toBe(2);
    const path = await policyFile('p.toml', tomlPolicy);
    expect((await run(['--policy', path, '--'])).code).toBe(2);
  });

  test('--jsonl reads one JSON string per line, so a command can contain newlines', async () => {
    const path = await policyFile('p.toml', tomlPolicy);
    const input = [
      JSON.stringify('cat <<EOF\nhi\nEOF'),
      '',
      JSON.stringify('ls -la\n\nls /tmp'),
      JSON.stringify('ls\\\n/x'),
    ].join('\n');
    const { code, results } = await run(['--policy', path, '--jsonl'], `${input}\n`);
    expect(code).toBe(0);
    expect(results.map((result) => [result.command, result.verdict])).toEqual([
      ['cat <<EOF\nhi\nEOF', 'approve'],
      ['ls -la\n\nls /tmp', 'allow'],
      ['ls\\\n/x', 'approve'],
    ]);
    // the continuation joins the words: the shell runs `ls/x`, and so do the rules
    const reasons = (results[2]?.reasons ?? []) as Array<{ command: string[] }>;
    expect(reasons.some((reason) => reason.command[0] === 'ls/x')).toBe(true);
  });

  test('--jsonl refuses a line that is not a JSON string, naming the line, with the usage code', async () => {
    const path = await policyFile('p.toml', tomlPolicy);
    for (const bad of ['ls -la', '{"command":"ls"}', '["ls"]', '42', '"unterminated']) {
      const { code, stderr, results } = await run(['--policy', path, '--jsonl'], `"ls"\n${bad}\n"ls"\n`);
      expect(code, bad).toBe(2);
      expect(stderr).toContain('stdin line 2');
      expect(results).toHaveLength(1);
    }
    const { code } = await run(['--policy', path, '--jsonl', '--exit-code'], 'ls\n');
    expect(code).toBe(64);
  });

  test('--exit-code exits with the strictest verdict: 0 allow, 1 confirm, 2 approve, 3 deny', async () => {
    const path = await policyFile(
      'p.toml',
      `[commands]
default = "approve"
rules = [ { match = "ls *", verdict = "allow" }, { match = "make deploy", verdict = "confirm" }, { match = "git push *", verdict = "deny" } ]
`,
    );
    const expectations: Array<[string, number]> = [
      ['ls -la', 0],
      ['make deploy', 1],
      ['whoami', 2],
      ['git push origin', 3],
      ['rm -rf /', 3],
    ];
    for (const [command, expected] of expectations) {
      expect((await run(['--policy', path, '--exit-code', '--', command])).code, command).toBe(expected);
      expect((await run(['--policy', path, '--exit-code'], `${command}\n`)).code, command).toBe(expected);
      expect((await run(['--policy', path, '--exit-code', '--jsonl'], `${JSON.stringify(command)}\n`)).code).toBe(
        expected,
      );
    }
    // the strictest over all lines
    expect((await run(['--policy', path, '--exit-code'], 'ls\nmake deploy\nls\n')).code).toBe(1);
    expect((await run(['--policy', path, '--exit-code'], 'ls\ngit push x\nwhoami\n')).code).toBe(3);
    expect((await run(['--policy', path, '--exit-code'], '')).code).toBe(0);
    // --confirm lowers confirm to allow before the exit code is taken
    expect((await run(['--policy', path, '--exit-code', '--confirm', '--', 'make', 'deploy'])).code).toBe(0);
    // without the flag the verdict never changes the exit code
    expect((await run(['--policy', path, '--', 'git', 'push', 'x'])).code).toBe(0);
  });

  test('with --exit-code, usage and policy errors exit 64, never a verdict code', async () => {
    const path = await policyFile('p.toml', tomlPolicy);
    const broken = await policyFile('broken.toml', '[commands\n');
    expect((await run(['--exit-code'])).code).toBe(64);
    expect((await run(['--policy', path, '--exit-code', '--bogus'])).code).toBe(64);
    expect((await run(['--policy', path, '--exit-code', '--'])).code).toBe(64);
    expect((await run(['--policy', broken, '--exit-code', '--', 'ls'])).code).toBe(64);
    expect((await run(['--policy', join(tmp.path, 'missing.toml'), '--exit-code', '--', 'ls'])).code).toBe(64);
    expect((await run(['--policy', path, '--jsonl', '--', 'ls'])).code).toBe(2);
  });
});
