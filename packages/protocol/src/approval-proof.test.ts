import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import {
  ApprovalBinding,
  ApprovalProof,
  approvalBinding,
  approvalChallenge,
  base64url,
  canonicalJson,
  policySha256,
  requestSha256,
  sha256,
} from './approval-proof';
import { RequestContext } from './messages';

const policy = {
  name: 'ops',
  shell: 'full',
  commands: { mode: 'shell', rules: [{ match: 'ls *', verdict: 'allow' }] },
};
const params = { command: 'touch /tmp/x', timeout_ms: 60_000, max_output_bytes: 1_048_576 };

function binding(overrides: Partial<Parameters<typeof approvalBinding>[0]> = {}) {
  return approvalBinding({
    approvalId: 'apr_1',
    tool: 'exec',
    policy,
    expiresAt: '2026-12-01T10:00:00.000Z',
    targets: [{ machineId: 'mch_a', op: 'exec', params }],
    ...overrides,
  });
}

describe('the pure SHA-256 and base64url give the same bytes as node:crypto', () => {
  test.each([0, 1, 3, 55, 56, 63, 64, 65, 119, 120, 1000, 4099])('%i random bytes', (n) => {
    const data = randomBytes(n);
    expect(Buffer.from(sha256(data)).toString('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    expect(base64url(data)).toBe(data.toString('base64url'));
  });
});

describe('approval bindings', () => {
  test('the request hash is the canonical JSON of op and params: key order and undefined do not matter', () => {
    const shuffled = { max_output_bytes: 1_048_576, cwd: undefined, timeout_ms: 60_000, command: 'touch /tmp/x' };
    expect(requestSha256('exec', shuffled)).toBe(requestSha256('exec', params));
    expect(requestSha256('exec', JSON.parse(JSON.stringify(params)))).toBe(requestSha256('exec', params));
    expect(canonicalJson({ b: [1, { d: 2, c: undefined }], a: 'x' })).toBe('{"a":"x","b":[1,{"d":2}]}');
  });

  test('any change to what runs, the op, the policy, the machine, the expiry or the id changes the challenge', () => {
    const base = approvalChallenge(binding());
    const variants = [
      binding({ targets: [{ machineId: 'mch_a', op: 'exec', params: { ...params, command: 'touch /tmp/y' } }] }),
      binding({ targets: [{ machineId: 'mch_a', op: 'exec', params: { ...params, env: { PATH: '/tmp' } } }] }),
      binding({ targets: [{ machineId: 'mch_a', op: 'job_start', params }] }),
      binding({ targets: [{ machineId: 'mch_b', op: 'exec', params }] }),
      binding({ policy: { ...policy, shell: 'sandboxed' } }),
      binding({ expiresAt: '2026-12-01T10:00:01.000Z' }),
      binding({ approvalId: 'apr_2' }),
      binding({ tool: 'exec_many' }),
    ];
    const challenges = variants.map(approvalChallenge);
    expect(new Set([base, ...challenges]).size).toBe(variants.length + 1);
    expect(approvalChallenge(binding())).toBe(base);
    expect(base).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('several machines: targets sorted by machine id, so the order of the call does not matter', () => {
    const a = { machineId: 'mch_a', op: 'exec', params };
    const b = { machineId: 'mch_b', op: 'exec', params };
    const one = binding({ tool: 'exec_many', targets: [b, a] });
    expect(one.targets.map((t) => t.machine_id)).toEqual(['mch_a', 'mch_b']);
    expect(approvalChallenge(one)).toBe(approvalChallenge(binding({ tool: 'exec_many', targets: [a, b] })));
    expect(one.policy_sha256).toBe(policySha256(JSON.parse(JSON.stringify(policy))));
  });

  test('the challenge is base64url(SHA-256(canonical JSON of the binding))', () => {
    const b = binding();
    expect(approvalChallenge(b)).toBe(createHash('sha256').update(canonicalJson(b)).digest('base64url'));
  });

  test('schemas: a proof travels in the request context and is refused when malformed', () => {
    const assertion = {
      credential_id: 'AAAA',
      authenticator_data: 'A'.repeat(50),
      client_data_json: 'e30',
      signature: 'MEUC',
    };
    const proof = { binding: binding(), assertion };
    expect(RequestContext.parse({ policy, approval_proof: proof }).approval_proof).toEqual(proof);
    expect(ApprovalProof.safeParse({ ...proof, extra: 1 }).success).toBe(false);
    expect(ApprovalBinding.safeParse({ ...binding(), targets: [] }).success).toBe(false);
    expect(ApprovalBinding.safeParse({ ...binding(), v: 2 }).success).toBe(false);
    expect(
      ApprovalProof.safeParse({ ...proof, assertion: { ...assertion, signature: 'not base64url!' } }).success,
    ).toBe(false);
  });
});
