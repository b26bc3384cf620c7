import { describe, expect, test } from 'vitest';
import { issuesOf, refusalOf } from '../../../test/support/config-issues';
import { parsePolicy, parsePolicyToml } from './parse-policy';

const designExample = `
name = "ops"
shell = "full"                    # off | sandboxed | full
gui = "off"
gui_apps = []
files = [ { path = "/srv/app", access = "rw" }, { path = "*", access = "ro" } ]
deny = ["~/.ssh", "/etc/shadow", "**/*.pem"]
tunnel_targets = ["127.0.0.1:5432", "10.0.0.0/8:443"]
[commands]
mode = "shell"
rulesets = ["no-destructive"]
default = "approve"
rules = [ { match = "git push *", verdict = "approve" }, { match = "ls *", verdict = "allow" } ]
allow = ["/usr/bin/systemctl status *", "df -h"]
[approval]
tools = ["write_file", "delete_path"]
approvers = "connector"
timeout = "10m"
`;

describe('parsePolicyToml', () => {
  test('the DESIGN §4 example parses, with the timeout in milliseconds', () => {
    const policy = parsePolicyToml(designExample);
    expect(policy.shell).toBe('full');
    expect(policy.files).toEqual([
      { path: '/srv/app', access: 'rw' },
      { path: '*', access: 'ro' },
    ]);
    expect(policy.commands.rulesets).toEqual(['no-destructive']);
    expect(policy.approval).toEqual({ tools: ['write_file', 'delete_path'], approvers: 'connector', timeout: 600_000 });
  });

  test('a policy with only a name grants nothing: no shell, screen, files or tunnels', () => {
    const policy = parsePolicyToml('name = "empty"');
    expect(policy).toMatchObject({ version: 1, shell: 'off', gui: 'off', gui_apps: [], files: [], deny: [] });
    expect(policy.tunnel_targets).toEqual([]);
    expect(policy.commands).toEqual({ mode: 'shell', rulesets: [], default: 'approve', rules: [], allow: [] });
    expect(policy.approval).toEqual({ tools: [], approvers: 'connector', timeout: 600_000 });
  });

  test('every problem is reported with its line and key path, unknown keys included', () => {
    const issues = issuesOf(() =>
      parsePolicyToml(
        [
          'name = "ops"',
          'shel = "full"',
          'shell = "ful"',
          'files = [',
          '  { path = "/srv", access = "rw" },',
          '  { path = "relative", access = "rx" },',
          ']',
          '[commands]',
          'mode = "allowlist"',
          'extra = 1',
          '[approval]',
          'timeout = "25h"',
        ].join('\n'),
      ),
    );
    expect(issues.map((i) => [i.line, i.path])).toEqual([
      [2, 'shel'],
      [3, 'shell'],
      [6, 'files[1].path'],
      [6, 'files[1].access'],
      [10, 'commands.extra'],
      [12, 'approval.timeout'],
    ]);
  });

  test('the message names each problem and quotes the bad value', () => {
    const { message } = refusalOf(() => parsePolicyToml('name = "x"\ngui = "watch"\n'));
    expect(message).toContain('line 2: gui:');
    expect(message).toContain('"watch"');
  });

  test('a TOML syntax error names its line', () => {
    const issues = issuesOf(() => parsePolicyToml('name = "x"\n\nshell = [1,,]\n'));
    expect(issues).toHaveLength(1);
    expect(issues[0]?.line).toBe(3);
  });

  test('a missing name is reported without a line', () => {
    const issues = issuesOf(() => parsePolicyToml('shell = "off"\n'));
    expect(issues).toEqual([{ path: 'name', message: 'required' }]);
  });

  test('files written as [[files]] tables get the line of the bad element', () => {
    const text = 'name = "x"\n[[files]]\npath = "/a"\naccess = "rw"\n[[files]]\npath = "/b"\naccess = "bad"\n';
    expect(issuesOf(() => parsePolicyToml(text)).map((i) => [i.line, i.path])).toEqual([[7, 'files[1].access']]);
  });

  test('the same files path twice is refused', () => {
    const text = 'name = "x"\nfiles = [{ path = "/a", access = "rw" },\n  { path = "/a", access = "ro" }]';
    expect(issuesOf(() => parsePolicyToml(text)).map((i) => [i.line, i.path])).toEqual([[3, 'files[1].path']]);
  });

  test.each([
    ['"1m"', 60_000],
    ['"90s"', 90_000],
    ['"1h30m"', 5_400_000],
    ['"24h"', 86_400_000],
    ['120000', 120_000],
  ])('approval timeout %s is %i ms', (written, ms) => {
    expect(parsePolicyToml(`name = "x"\n[approval]\ntimeout = ${written}`).approval.timeout).toBe(ms);
  });

  test.each(['"59s"', '"25h"', '"10 minutes"', '""', '"1d"', '1.5', '0'])(
    'approval timeout %s is refused',
    (written) => {
      expect(issuesOf(() => parsePolicyToml(`name = "x"\n[approval]\ntimeout = ${written}`))[0]?.path).toBe(
        'approval.timeout',
      );
    },
  );

  test.each([
    ['approval tools outside the DESIGN §6 list', '[approval]\ntools = ["read_file"]', 'approval.tools[0]'],
    ['an unknown approver kind', '[approval]\napprovers = "anyone"', 'approval.approvers'],
    ['a bad tunnel target', 'tunnel_targets = ["10.0.0.0/33:443"]', 'tunnel_targets[0]'],
    ['a relative deny path', 'deny = ["secrets"]', 'deny[0]'],
    ['a deny path with ..', 'deny = ["/srv/../etc"]', 'deny[0]'],
    ['an unknown ruleset', '[commands]\nrulesets = ["yolo"]', 'commands.rulesets[0]'],
    ['a gui level that does not exist', 'gui = "full"', 'gui'],
    ['a future format version', 'version = 2', 'version'],
  ])('%s is refused', (_, body, path) => {
    expect(issuesOf(() => parsePolicyToml(`name = "x"\n${body}`)).map((i) => i.path)).toEqual([path]);
  });
});

describe('parsePolicy', () => {
  test('a parsed policy survives JSON and parses to the same value', () => {
    const policy = parsePolicyToml(designExample);
    expect(parsePolicy(JSON.parse(JSON.stringify(policy)))).toEqual(policy);
  });

  test('unknown keys in JSON are refused with their key path', () => {
    expect(issuesOf(() => parsePolicy({ name: 'x', commands: { mod: 'shell' } }))).toEqual([
      { path: 'commands.mod', message: 'unknown key "mod"' },
    ]);
  });

  test('a non-object is refused', () => {
    expect(issuesOf(() => parsePolicy('full'))[0]?.path).toBe('');
  });
});
