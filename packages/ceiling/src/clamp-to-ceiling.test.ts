import {
  FULL_POLICY,
  fileAccess,
  guiLevels,
  layeredFileAccess,
  matchTunnelTarget,
  minAccess,
  type Policy,
  READ_ONLY_POLICY,
  shellLevels,
} from '@letkite/policy';
import { describe, expect, test } from 'vitest';
import type { Ceiling } from './ceiling-schema';
import { clampToCeiling } from './clamp-to-ceiling';
import { CLOSED_CEILING, DEFAULT_CEILING } from './defaults';
import {
  HOME,
  Random,
  randomCeiling,
  randomHosts,
  randomPath,
  randomPolicy,
  randomPorts,
} from './random-inputs.testing';

const policy = (over: Partial<Policy>): Policy => ({ ...FULL_POLICY, ...over });
const ceiling = (over: Partial<Ceiling>): Ceiling => ({ ...DEFAULT_CEILING, ...over });
const access = (clamped: ReturnType<typeof clampToCeiling>, path: string) =>
  layeredFileAccess(path, { layers: clamped.file_layers, deny: clamped.deny, home: HOME });

describe('clampToCeiling', () => {
  test.each(
    shellLevels.flatMap((p) =>
      shellLevels.map((c) => [p, c, shellLevels[Math.min(shellLevels.indexOf(p), shellLevels.indexOf(c))]] as const),
    ),
  )('shell: policy %s, ceiling %s → %s', (p, c, expected) => {
    expect(clampToCeiling(policy({ shell: p }), ceiling({ shell: c })).shell).toBe(expected);
  });

  test.each(
    guiLevels.flatMap((p) =>
      guiLevels.map((c) => [p, c, guiLevels[Math.min(guiLevels.indexOf(p), guiLevels.indexOf(c))]] as const),
    ),
  )('gui: policy %s, ceiling %s → %s', (p, c, expected) => {
    expect(clampToCeiling(policy({ gui: p }), ceiling({ gui: c })).gui).toBe(expected);
  });

  test.each([
    ['shell', 'any', 'shell'],
    ['allowlist', 'any', 'allowlist'],
    ['shell', 'allowlist', 'allowlist'],
    ['allowlist', 'allowlist', 'allowlist'],
  ] as const)('commands mode: policy %s, ceiling %s → %s', (p, c, expected) => {
    const clamped = clampToCeiling(
      policy({ commands: { ...FULL_POLICY.commands, mode: p } }),
      ceiling({ commands_mode: c }),
    );
    expect(clamped.commands.mode).toBe(expected);
  });

  test('a path is rw only where both say rw', () => {
    const clamped = clampToCeiling(
      policy({
        files: [
          { path: '/srv/app', access: 'rw' },
          { path: '/srv', access: 'ro' },
          { path: '/var/log/*.log', access: 'rw' },
        ],
      }),
      ceiling({
        files: [
          { path: '/srv', access: 'rw' },
          { path: '/srv/app/config', access: 'ro' },
          { path: '/var', access: 'rw' },
          { path: '*', access: 'ro' },
        ],
        deny: [],
      }),
    );
    expect(access(clamped, '/srv/app/main.ts')).toBe('rw');
    expect(access(clamped, '/srv/app/config/db.toml')).toBe('ro');
    expect(access(clamped, '/srv/other')).toBe('ro');
    expect(access(clamped, '/var/log/app.log')).toBe('rw');
    expect(access(clamped, '/var/log/app.txt')).toBe('none');
    expect(access(clamped, '/etc/hosts')).toBe('none');
  });

  test('deny is the union of both lists', () => {
    const clamped = clampToCeiling(
      policy({ deny: ['/srv/secret', '/etc/shadow'] }),
      ceiling({ deny: ['/etc/shadow', '/root'] }),
    );
    expect(clamped.deny).toEqual(['/srv/secret', '/etc/shadow', '/root']);
    expect(access(clamped, '/root/x')).toBe('none');
    expect(access(clamped, '/srv/secret/x')).toBe('none');
  });

  test('tunnel targets are intersected', () => {
    const clamped = clampToCeiling(
      policy({ tunnel_targets: ['10.0.0.0/8:*', '127.0.0.1:5432', 'db:5432'] }),
      ceiling({ tunnel_targets: ['10.1.0.0/16:443', '127.0.0.1:6379'] }),
    );
    expect(clamped.tunnel_targets).toEqual(['10.1.0.0/16:443']);
  });

  test.each([
    [[], [], 'act', []],
    [['code'], [], 'act', ['code']],
    [[], ['code'], 'act', ['code']],
    [['code', 'firefox'], ['firefox', 'terminal'], 'act', ['firefox']],
    [['code'], ['firefox'], 'off', []],
  ])('gui_apps: policy %j, ceiling %j → gui %s with %j', (p, c, gui, apps) => {
    const clamped = clampToCeiling(policy({ gui: 'act', gui_apps: p }), ceiling({ gui: 'act', gui_apps: c }));
    expect(clamped.gui).toBe(gui);
    expect(clamped.gui_apps).toEqual(apps);
  });

  test('the ceiling rules become a layer of their own, after the policy rules', () => {
    const rules = [{ match: 'systemctl *', verdict: 'approve' as const }];
    const clamped = clampToCeiling(
      policy({ commands: { ...FULL_POLICY.commands, rules: [{ match: 'ls *', verdict: 'allow' }] } }),
      ceiling({ rules }),
    );
    expect(clamped.commands.rules).toEqual([{ match: 'ls *', verdict: 'allow' }]);
    expect(clamped.rule_layers).toEqual([rules]);
    expect(clampToCeiling(FULL_POLICY, ceiling({ rules: [] })).rule_layers).toEqual([]);
  });

  test.each([
    ['full', 'shell', true, true],
    ['full', 'allowlist', true, false],
    ['off', 'shell', true, false],
    ['full', 'shell', false, false],
  ] as const)('terminals with shell %s, mode %s, ceiling terminals %s → %s', (shell, mode, allowed, expected) => {
    const clamped = clampToCeiling(
      policy({ shell, commands: { ...FULL_POLICY.commands, mode } }),
      ceiling({ shell: 'full', terminals: allowed }),
    );
    expect(clamped.terminals).toBe(expected);
  });

  test('transfers, wake and run_as come from the ceiling', () => {
    const clamped = clampToCeiling(FULL_POLICY, ceiling({ transfers: false, wake: true, run_as: 'svc' }));
    expect(clamped).toMatchObject({ transfers: false, wake: true, run_as: 'svc' });
  });

  test('the full built-in under the default ceiling is sandboxed, home and /tmp rw, the rest ro, secrets hidden', () => {
    const clamped = clampToCeiling(FULL_POLICY, DEFAULT_CEILING);
    expect(clamped.shell).toBe('sandboxed');
    expect(access(clamped, '/home/kite/project/a.ts')).toBe('rw');
    expect(access(clamped, '/tmp/x')).toBe('rw');
    expect(access(clamped, '/etc/hosts')).toBe('ro');
    expect(access(clamped, '/home/kite/.ssh/id_ed25519')).toBe('none');
    expect(clamped.tunnel_targets).toEqual([]);
  });

  test('the closed ceiling leaves nothing', () => {
    const clamped = clampToCeiling(FULL_POLICY, CLOSED_CEILING);
    expect(clamped).toMatchObject({ shell: 'off', gui: 'off', tunnel_targets: [], terminals: false, transfers: false });
    expect(clamped.commands.mode).toBe('allowlist');
    expect(access(clamped, '/home/kite/x')).toBe('none');
    expect(access(clamped, '/')).toBe('none');
  });

  test('the result shares no arrays with its inputs', () => {
    const p = randomPolicy(new Random(7));
    const c = randomCeiling(new Random(8));
    const clamped = clampToCeiling(p, c);
    clamped.deny.push('/x');
    clamped.commands.rules.push({ match: 'x', verdict: 'allow' });
    clamped.file_layers[0]?.push({ path: '/y', access: 'rw' });
    expect(p.deny).not.toContain('/x');
    expect(p.commands.rules).not.toContainEqual({ match: 'x', verdict: 'allow' });
    expect(p.files).not.toContainEqual({ path: '/y', access: 'rw' });
  });

  test('property: a policy can never exceed the ceiling (or itself), over 500 generated pairs', () => {
    const r = new Random(0xc0ffee);
    for (let n = 0; n < 500; n++) {
      const p = randomPolicy(r);
      const c = randomCeiling(r);
      const clamped = clampToCeiling(p, c);
      const context = `pair ${n}: ${JSON.stringify({ p, c })}`;

      expect(shellLevels.indexOf(clamped.shell), context).toBeLessThanOrEqual(
        Math.min(shellLevels.indexOf(p.shell), shellLevels.indexOf(c.shell)),
      );
      expect(guiLevels.indexOf(clamped.gui), context).toBeLessThanOrEqual(
        Math.min(guiLevels.indexOf(p.gui), guiLevels.indexOf(c.gui)),
      );
      if (c.commands_mode === 'allowlist') expect(clamped.commands.mode, context).toBe('allowlist');
      if (c.gui_apps.length > 0 && clamped.gui !== 'off') {
        expect(clamped.gui_apps.length, context).toBeGreaterThan(0);
        for (const app of clamped.gui_apps) expect(c.gui_apps, context).toContain(app);
      }
      for (const d of [...p.deny, ...c.deny]) expect(clamped.deny, context).toContain(d);
      expect(clamped.rule_layers.flat(), context).toEqual(c.rules);
      if (clamped.terminals) expect(c.terminals && clamped.shell !== 'off', context).toBe(true);
      expect([clamped.transfers, clamped.wake, clamped.run_as]).toEqual([c.transfers, c.wake, c.run_as]);

      for (let k = 0; k < 20; k++) {
        const path = randomPath(r);
        const fromPolicy = fileAccess(path, { files: p.files, deny: p.deny, home: HOME });
        const fromCeiling = fileAccess(path, { files: c.files, deny: c.deny, home: HOME });
        expect(access(clamped, path), `${context} at ${path}`).toBe(minAccess(fromPolicy, fromCeiling));
      }
      for (const host of randomHosts) {
        for (const port of randomPorts) {
          const allowed = matchTunnelTarget(host, port, clamped.tunnel_targets);
          const both =
            matchTunnelTarget(host, port, p.tunnel_targets) && matchTunnelTarget(host, port, c.tunnel_targets);
          expect(allowed, `${context} to ${host}:${port}`).toBe(both);
        }
      }
    }
  });

  test('the read-only built-in keeps its secret list under any ceiling', () => {
    const r = new Random(42);
    for (let n = 0; n < 50; n++) {
      const clamped = clampToCeiling(READ_ONLY_POLICY, randomCeiling(r));
      expect(access(clamped, '/home/kite/.ssh/id_rsa')).toBe('none');
      expect(clamped.shell).toBe('off');
    }
  });
});
