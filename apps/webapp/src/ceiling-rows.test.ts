import { describe, expect, test } from 'vitest';
import { ceilingRows } from './ceiling-rows';

describe('ceilingRows', () => {
  test('a default ceiling reads as words, in a fixed order', () => {
    const rows = ceilingRows({
      version: 1,
      shell: 'sandboxed',
      commands_mode: 'any',
      files: [
        { path: '~', access: 'rw' },
        { path: '*', access: 'ro' },
      ],
      deny: ['~/.ssh', '**/*.pem'],
      gui: 'off',
      gui_apps: [],
      tunnel_targets: [],
      terminals: true,
      transfers: true,
      wake: false,
      run_as: 'letkite',
      rules: [{ match: 'systemctl *', verdict: 'approve' }],
      allow: [],
      approvers: [],
    });
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ['Shell', 'sandboxed — commands run inside the OS sandbox'],
      ['Commands', 'as each policy says'],
      ['Files', '2 rules'],
      ['Hidden paths', '2 hidden'],
      ['Screen', 'off'],
      ['Screen apps', 'any'],
      ['Tunnels', 'none'],
      ['Terminals', 'allowed'],
      ['File transfers', 'allowed'],
      ['Wake-on-LAN', 'not allowed'],
      ['Runs as', 'letkite'],
      ['Machine rules', '1 added to every policy'],
      ['Allowed programs', 'none'],
      ['Pinned approvers', 'none'],
    ]);
    expect(rows.find((r) => r.key === 'files')?.items).toEqual(['~ — read and write', '* — read only']);
    expect(rows.find((r) => r.key === 'rules')?.items).toEqual(['systemctl * → approve']);
    expect(rows.find((r) => r.key === 'deny')?.items).toEqual(['~/.ssh', '**/*.pem']);
  });

  test('an unknown key is shown as JSON, never dropped; odd values are shown as they came', () => {
    const rows = ceilingRows({ shell: 'weird', terminals: 'maybe', future_switch: { on: true } });
    expect(rows).toEqual([
      { key: 'shell', label: 'Shell', value: 'weird', items: [] },
      { key: 'terminals', label: 'Terminals', value: 'maybe', items: [] },
      { key: 'future_switch', label: 'future_switch', value: '{"on":true}', items: [] },
    ]);
  });
});
