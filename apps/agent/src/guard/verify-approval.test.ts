import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCeilingToml } from '@letkite/ceiling';
import { type ApprovalProof, isLetKiteError, type RequestFrame } from '@letkite/protocol';
import { afterAll, describe, expect, test } from 'vitest';
import { bindingFor, TestPasskey } from '../../../../test/support/passkey-signer';
import { ApprovalVerifier, checkApprovalProof, verifiedApprovalOf } from './verify-approval';

const petra = TestPasskey.create('ES256');
const rui = TestPasskey.create('EdDSA');
const stranger = TestPasskey.create('ES256');
const ceiling = parseCeilingToml(
  `version = 1\nshell = "full"\napprovers = [ ${petra.approverToml('Petra')}, ${rui.approverToml('Rui', 'letkite.example.com')} ]\n`,
);
const policy = { name: 'ops', shell: 'full', commands: { rules: [{ match: 'touch *', verdict: 'approve' }] } };
const params = { command: 'touch /tmp/x', timeout_ms: 60_000, max_output_bytes: 1_048_576 };
const machineId = 'mch_a';
const now = new Date();

function codeAndReason(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (!isLetKiteError(err)) throw err;
    return `${err.code}:${String(err.details?.reason ?? '')}`;
  }
}

function check(proof: ApprovalProof, overrides: Partial<Parameters<typeof checkApprovalProof>[0]> = {}) {
  return () =>
    checkApprovalProof({
      proof,
      op: 'exec',
      params,
      policy,
      machineId,
      approvers: ceiling.approvers,
      now,
      ...overrides,
    });
}

const good = () => bindingFor({ machineId, op: 'exec', params, policy });

describe('checkApprovalProof', () => {
  test('a pinned passkey over the exact binding holds (ES256 and Ed25519)', () => {
    expect(check(petra.prove(good()))()).toMatchObject({ approver: 'Petra' });
    const ruiProof = rui.prove(good(), { rpId: 'letkite.example.com', origin: 'https://letkite.example.com' });
    expect(check(ruiProof)()).toMatchObject({ approver: 'Rui' });
    // A subdomain origin of the relying party is what browsers allow too.
    const sub = rui.prove(good(), { rpId: 'letkite.example.com', origin: 'https://app.letkite.example.com' });
    expect(codeAndReason(check(sub))).toBe('ok');
  });

  test('several machines in one approval: each finds its own entry', () => {
    const many = bindingFor({
      machineId: 'mch_b',
      op: 'exec',
      params,
      policy,
      tool: 'exec_many',
      others: [{ machineId, op: 'exec', params }],
    });
    expect(codeAndReason(check(petra.prove(many)))).toBe('ok');
    expect(codeAndReason(check(petra.prove(many), { machineId: 'mch_c' }))).toBe('blocked_by_ceiling:other_machine');
  });

  test.each([
    ['another command', () => check(petra.prove(good()), { params: { ...params, command: 'touch /tmp/y' } })],
    ['an added env', () => check(petra.prove(good()), { params: { ...params, env: { PATH: '/tmp' } } })],
    ['another op with the same params', () => check(petra.prove(good()), { op: 'job_start' })],
  ])('a proof for something else is refused: %s', (_, fn) => {
    expect(codeAndReason(fn())).toBe('blocked_by_ceiling:other_request');
  });

  test('each field of the binding and the assertion is checked', () => {
    const b = good();
    expect(codeAndReason(check(petra.prove(b), { machineId: 'mch_other' }))).toBe('blocked_by_ceiling:other_machine');
    expect(codeAndReason(check(petra.prove(b), { policy: { ...policy, shell: 'sandboxed' } }))).toBe(
      'blocked_by_ceiling:other_policy',
    );
    const past = bindingFor({ machineId, op: 'exec', params, policy, expiresAt: new Date(now.getTime() - 1000) });
    expect(codeAndReason(check(petra.prove(past)))).toBe('approval_expired:expired');
    const far = bindingFor({ machineId, op: 'exec', params, policy, expiresAt: new Date(now.getTime() + 48 * 3600e3) });
    expect(codeAndReason(check(petra.prove(far)))).toBe('blocked_by_ceiling:expiry');
    // A key nobody pinned, and a pinned credential id with a signature by another key.
    expect(codeAndReason(check(stranger.prove(b)))).toBe('blocked_by_ceiling:unknown_approver');
    expect(codeAndReason(check(stranger.prove(b, { credentialId: petra.credentialId })))).toBe(
      'blocked_by_ceiling:signature',
    );
    // A signature made for another binding, moved onto this one.
    const other = petra.prove(bindingFor({ machineId, op: 'exec', params, policy }));
    expect(codeAndReason(check({ binding: b, assertion: other.assertion }))).toBe('blocked_by_ceiling:client_data');
    // The binding edited after signing (expiry extended).
    const signed = petra.prove(b);
    const edited = { ...signed, binding: { ...b, expires_at: new Date(now.getTime() + 3600e3).toISOString() } };
    expect(codeAndReason(check(edited))).toBe('blocked_by_ceiling:client_data');
    // Sign-in style assertion, foreign origin, wrong relying party, no user verification / presence.
    expect(codeAndReason(check(petra.prove(b, { type: 'webauthn.create' })))).toBe('blocked_by_ceiling:client_data');
    expect(codeAndReason(check(petra.prove(b, { origin: 'https://evil.example' })))).toBe(
      'blocked_by_ceiling:client_data',
    );
    expect(codeAndReason(check(petra.prove(b, { origin: 'http://localhost.evil:8787' })))).toBe(
      'blocked_by_ceiling:client_data',
    );
    expect(codeAndReason(check(petra.prove(b, { rpId: 'evil.example', origin: 'http://localhost:1' })))).toBe(
      'blocked_by_ceiling:authenticator_data',
    );
    expect(codeAndReason(check(petra.prove(b, { flags: 0x01 })))).toBe('blocked_by_ceiling:user_verification');
    expect(codeAndReason(check(petra.prove(b, { flags: 0x04 })))).toBe('blocked_by_ceiling:user_verification');
    // A flipped signature bit.
    const sig = Buffer.from(signed.assertion.signature, 'base64url');
    sig[sig.length - 1] = (sig[sig.length - 1] ?? 0) ^ 1;
    const flipped = { ...signed, assertion: { ...signed.assertion, signature: sig.toString('base64url') } };
    expect(codeAndReason(check(flipped))).toBe('blocked_by_ceiling:signature');
  });
});

describe('ApprovalVerifier', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'letkite-approvals-'));
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

  const frame = (proof?: ApprovalProof): RequestFrame => ({
    type: 'request',
    id: 'r1',
    op: 'exec',
    params,
    context: { policy, approved: true, ...(proof ? { approval_proof: proof } : {}) },
  });

  test('marks a verified request, refuses its replay, and remembers used ids across restarts', () => {
    const proof = petra.prove(good());
    const verifier = new ApprovalVerifier(machineId, stateDir);
    expect(verifiedApprovalOf(verifier.check(frame(proof), ceiling).context)).toMatchObject({ approver: 'Petra' });
    expect(codeAndReason(() => verifier.check(frame(proof), ceiling))).toBe('blocked_by_ceiling:replayed');
    const file = join(stateDir, 'used-approvals.json');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const restarted = new ApprovalVerifier(machineId, stateDir);
    expect(codeAndReason(() => restarted.check(frame(proof), ceiling))).toBe('blocked_by_ceiling:replayed');
  });

  test('the gateway cannot mark a request itself, and a bad proof refuses the request', () => {
    const verifier = new ApprovalVerifier(machineId, null);
    const forged = JSON.parse(JSON.stringify(frame())) as RequestFrame;
    expect(verifiedApprovalOf(verifier.check(forged, ceiling).context)).toBeUndefined();
    expect(codeAndReason(() => verifier.check(frame(stranger.prove(good())), ceiling))).toBe(
      'blocked_by_ceiling:unknown_approver',
    );
  });

  test('without pinned approvers a proof counts for nothing', () => {
    const verifier = new ApprovalVerifier(machineId, null);
    const open = parseCeilingToml('version = 1\n');
    expect(verifiedApprovalOf(verifier.check(frame(petra.prove(good())), open).context)).toBeUndefined();
  });
});
