import { loadCommandRules } from '@letkite/command-rules';
import { type ConfigIssue, parsePolicy } from '@letkite/policy';
import { isLetKiteError, type LetKiteError } from '@letkite/protocol';
import { beforeAll, describe, expect, test } from 'vitest';
import { clampToCeiling } from './clamp-to-ceiling';
import { parseCoseKey } from './cose-key';
import { judgeCommand } from './judge-command';
import { parseCeilingToml } from './parse-ceiling';
import { SAMPLE_COSE_KEYS } from './random-inputs.testing';
import { renderCeilingToml } from './render-ceiling';

function issuesOf(text: string): ConfigIssue[] {
  try {
    parseCeilingToml(text);
  } catch (err) {
    expect(isLetKiteError(err, 'invalid_params')).toBe(true);
    return (err as LetKiteError).details?.issues as ConfigIssue[];
  }
  throw new Error('expected the ceiling to be refused');
}

const approverLine = (fields: Record<string, string>) =>
  `approvers = [ { ${Object.entries(fields)
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join(', ')} } ]\n`;
const petra = { name: 'Petra', credential_id: 'cGV0cmE', public_key: SAMPLE_COSE_KEYS.es256, rp_id: 'localhost' };

describe('ceiling approvers', () => {
  test('pinned approvers parse, keep their keys readable, and round-trip through rendering', () => {
    const ceiling = parseCeilingToml(
      `version = 1\n${approverLine(petra)}`.replace(
        ' } ]',
        ` }, { name = "Rui", credential_id = "cnVp", public_key = "${SAMPLE_COSE_KEYS.ed25519}", rp_id = "letkite.example.com" } ]`,
      ),
    );
    expect(ceiling.approvers.map((a) => a.name)).toEqual(['Petra', 'Rui']);
    expect(parseCoseKey(ceiling.approvers[0]?.public_key ?? '').alg).toBe('ES256');
    expect(parseCoseKey(ceiling.approvers[1]?.public_key ?? '').alg).toBe('EdDSA');
    expect(parseCeilingToml(renderCeilingToml(ceiling, { comments: true }))).toEqual(ceiling);
  });

  test.each([
    ['a public key that is not base64url', { ...petra, public_key: 'not a key!' }, 'public_key'],
    ['a public key that is not COSE', { ...petra, public_key: 'AAAA' }, 'public_key'],
    [
      'a COSE key of an algorithm the agent cannot verify',
      // {1: 2, 3: -35 (ES384), -1: 2, -2: 32 bytes, -3: 32 bytes}
      {
        ...petra,
        public_key: Buffer.from([
          0xa5,
          1,
          2,
          3,
          0x38,
          0x22,
          0x20,
          2,
          0x21,
          0x58,
          0x20,
          ...new Array(32).fill(1),
          0x22,
          0x58,
          0x20,
          ...new Array(32).fill(2),
        ]).toString('base64url'),
      },
      'public_key',
    ],
    ['an rp_id that is not a host name', { ...petra, rp_id: 'https://localhost' }, 'rp_id'],
    ['a credential id that is not base64url', { ...petra, credential_id: 'a b' }, 'credential_id'],
    ['a name with a control character', { ...petra, name: 'Pe\u001btra' }, 'name'],
  ])('refuses %s, naming the key', (_, fields, key) => {
    const issues = issuesOf(`version = 1\n${approverLine(fields)}`);
    expect(issues.map((i) => i.path)).toContain(`approvers[0].${key}`);
  });

  test('refuses an unknown key in an approver entry and a passkey pinned twice', () => {
    expect(issuesOf(`version = 1\n${approverLine({ ...petra, role: 'admin' })}`).length).toBeGreaterThan(0);
    const twice = `version = 1\napprovers = [ ${[petra, { ...petra, name: 'again' }]
      .map(
        (a) =>
          `{ ${Object.entries(a)
            .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
            .join(', ')} }`,
      )
      .join(', ')} ]\n`;
    expect(issuesOf(twice).map((i) => i.path)).toContain('approvers[1].credential_id');
  });
});

describe('the ceiling program allowlist', () => {
  beforeAll(async () => {
    await loadCommandRules();
  });

  const wide = parsePolicy({
    name: 'wide',
    shell: 'full',
    files: [{ path: '*', access: 'rw' }],
    commands: { mode: 'allowlist', allow: ['bash *', 'python3 *', 'ls *'] },
  });

  test('a command runs only when the ceiling list AND the policy list allow it', () => {
    const ceiling = parseCeilingToml(
      'version = 1\nshell = "full"\ncommands_mode = "allowlist"\nallow = ["ls *", "df -h"]\n',
    );
    const clamped = clampToCeiling(wide, ceiling);
    expect(clamped.ceiling_allow).toEqual(['ls *', 'df -h']);
    expect(judgeCommand(clamped, ceiling, 'ls -la /tmp').verdict).toBe('allow');
    for (const cmd of ['bash -c id', 'python3 -c "print(1)"', ['bash', '-c', 'id']]) {
      const j = judgeCommand(clamped, ceiling, cmd);
      expect(j.verdict).toBe('deny');
      expect(j.layer).toBe('ceiling');
    }
    // On the ceiling's list but not on the policy's: the policy narrows, it never widens.
    expect(judgeCommand(clamped, ceiling, 'df -h').verdict).toBe('deny');
  });

  test('an empty ceiling list runs nothing and says why', () => {
    const ceiling = parseCeilingToml('version = 1\nshell = "full"\ncommands_mode = "allowlist"\n');
    const j = judgeCommand(clampToCeiling(wide, ceiling), ceiling, 'ls /tmp');
    expect(j.verdict).toBe('deny');
    expect(j.layer).toBe('ceiling');
    expect(j.reasons.map((r) => r.message).join(' ')).toMatch(/allow list is empty/);
  });

  test('commands_mode = "any" leaves the list unused', () => {
    const ceiling = parseCeilingToml('version = 1\nshell = "full"\nallow = []\n');
    expect(clampToCeiling(wide, ceiling).ceiling_allow).toBeNull();
    expect(judgeCommand(clampToCeiling(wide, ceiling), ceiling, 'bash -c id').verdict).toBe('allow');
  });
});
