import { describe, expect, test } from 'vitest';
import { issuesOf, refusalOf } from '../../../test/support/config-issues';
import { DEFAULT_CEILING } from './defaults';
import { parseCeiling, parseCeilingToml } from './parse-ceiling';

const designExample = `
version = 1
shell = "sandboxed"                 # the most any policy gets here
commands_mode = "any"               # any | allowlist (force allowlist mode here)
files = [ { path = "/srv", access = "rw" }, { path = "/var/log", access = "ro" } ]
deny = ["/root", "/etc/shadow"]
gui = "off"
tunnel_targets = ["127.0.0.1:5432"]
terminals = true
transfers = true
wake = false
run_as = "letkite"                  # OS account that commands run as
rules = [ { match = "systemctl *", verdict = "approve" } ]   # added to every policy's rules; strictest wins
`;

describe('parseCeilingToml', () => {
  test('the DESIGN §5 example parses as written', () => {
    expect(parseCeilingToml(designExample)).toEqual({
      version: 1,
      shell: 'sandboxed',
      commands_mode: 'any',
      files: [
        { path: '/srv', access: 'rw' },
        { path: '/var/log', access: 'ro' },
      ],
      deny: ['/root', '/etc/shadow'],
      gui: 'off',
      gui_apps: [],
      tunnel_targets: ['127.0.0.1:5432'],
      terminals: true,
      transfers: true,
      wake: false,
      run_as: 'letkite',
      rules: [{ match: 'systemctl *', verdict: 'approve' }],
      allow: [],
      approvers: [],
    });
  });

  test('a file holding only version = 1 means exactly the defaults', () => {
    expect(parseCeilingToml('version = 1\n')).toEqual(DEFAULT_CEILING);
  });

  test('a key that is set replaces its default, an empty list included', () => {
    const ceiling = parseCeilingToml('version = 1\ndeny = []\nfiles = []\n');
    expect(ceiling.deny).toEqual([]);
    expect(ceiling.files).toEqual([]);
  });

  test.each([
    ['', 'version'],
    ['shell = "off"', 'version'],
    ['version = 2', 'version'],
    ['version = "1"', 'version'],
  ])('%j is refused: version = 1 is required', (text, path) => {
    expect(issuesOf(() => parseCeilingToml(text)).map((i) => i.path)).toEqual([path]);
  });

  test('a typo is an error with its line, never a silently ignored key', () => {
    const issues = issuesOf(() => parseCeilingToml('version = 1\nshel = "off"\n'));
    expect(issues).toEqual([{ path: 'shel', line: 2, message: 'unknown key "shel"' }]);
  });

  test('every problem is reported with its line and key', () => {
    const text = [
      'version = 1',
      'shell = "unlimited"',
      'commands_mode = "some"',
      'files = [',
      '  { path = "/srv", access = "rw" },',
      '  { path = "/var/log", acces = "ro" },',
      ']',
      'deny = ["etc/shadow"]',
      'tunnel_targets = ["127.0.0.1"]',
      'terminals = "yes"',
      'run_as = "bad user"',
      'rules = [ { match = "x", verdict = "maybe" } ]',
    ].join('\n');
    expect(issuesOf(() => parseCeilingToml(text)).map((i) => [i.line, i.path])).toEqual([
      [2, 'shell'],
      [3, 'commands_mode'],
      [6, 'files[1].access'],
      [6, 'files[1].acces'],
      [8, 'deny[0]'],
      [9, 'tunnel_targets[0]'],
      [10, 'terminals'],
      [11, 'run_as'],
      [12, 'rules[0].verdict'],
    ]);
  });

  test('the error message lists every problem with its line', () => {
    expect(refusalOf(() => parseCeilingToml('version = 1\ngui = "everything"\nwake = 1\n')).message).toMatch(
      /^invalid ceiling: line 2: gui: .*"everything".*; line 3: wake: /,
    );
  });

  test('a TOML syntax error names its line', () => {
    expect(issuesOf(() => parseCeilingToml('version = 1\nshell = "off\n'))[0]?.line).toBe(2);
  });
});

describe('parseCeiling', () => {
  test('a ceiling survives JSON (as an agent reports it) unchanged', () => {
    const ceiling = parseCeilingToml(designExample);
    expect(parseCeiling(JSON.parse(JSON.stringify(ceiling)))).toEqual(ceiling);
  });

  test('an unknown key in JSON is refused', () => {
    expect(issuesOf(() => parseCeiling({ version: 1, wake_on_lan: true })).map((i) => i.path)).toEqual(['wake_on_lan']);
  });
});
