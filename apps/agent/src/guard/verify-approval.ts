import { createHash, createPublicKey, verify } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Ceiling, decodeBase64url, type PinnedApprover, parseCoseKey, verifiesApprovals } from '@letkite/ceiling';
import {
  type ApprovalProof,
  approvalChallenge,
  LetKiteError,
  policySha256,
  type RequestContext,
  type RequestFrame,
  requestSha256,
} from '@letkite/protocol';

/**
 * Approvals this machine verifies itself (DESIGN §6, §9): the gateway's `approved: true` is only its word, so
 * wherever the ceiling demands more, the agent checks an approver's passkey signature over the exact binding
 * (packages/protocol approval-proof.ts) against the approvers pinned in its ceiling, with its own clock, and uses
 * each approval once.
 */

/** An approval the agent checked: who signed, which approval. Never comes from the wire (see `verifiedApprovalOf`). */
export interface VerifiedApproval {
  approvalId: string;
  approver: string;
}

// A symbol key cannot be written in JSON, so no frame from the gateway can carry this mark.
const verifiedKey: unique symbol = Symbol('letkite.verified-approval');
type MarkedContext = RequestContext & { [verifiedKey]?: VerifiedApproval };

/** The approval the agent verified for this request, if any. */
export function verifiedApprovalOf(context: RequestContext): VerifiedApproval | undefined {
  return (context as MarkedContext)[verifiedKey];
}

/** The request context marked with an approval the agent has verified (for `authorizeCommand` and co.). */
export function withVerifiedApproval(context: RequestContext, approval: VerifiedApproval): RequestContext {
  return { ...context, [verifiedKey]: approval } as MarkedContext;
}

/** An approval must not claim to last longer than this (the policy maximum is 24 h): it bounds the used-id list. */
const MAX_APPROVAL_LIFETIME_MS = 25 * 3600_000;

function refuse(reason: string, message: string, details: Record<string, unknown> = {}): LetKiteError {
  return new LetKiteError('blocked_by_ceiling', `approval refused by this machine: ${message}`, {
    layer: 'ceiling',
    key: 'approvers',
    reason,
    ...details,
  });
}

/** Checks that a WebAuthn origin belongs to the approver's relying party (same host or a subdomain of it). */
function originMatches(origin: unknown, rpId: string): boolean {
  if (typeof origin !== 'string') return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const host = url.hostname;
  if (host !== rpId && !host.endsWith(`.${rpId}`)) return false;
  // Browsers allow WebAuthn on https, and on http only for localhost.
  return url.protocol === 'https:' || (url.protocol === 'http:' && host === 'localhost');
}

/**
 * The pure signature check of a proof for one request: everything but replay. Throws `blocked_by_ceiling` (with
 * `details.reason`) or `approval_expired`; returns who approved.
 */
export function checkApprovalProof(args: {
  proof: ApprovalProof;
  op: string;
  params: unknown;
  policy: unknown;
  machineId: string;
  approvers: readonly PinnedApprover[];
  now: Date;
}): VerifiedApproval {
  const { binding, assertion } = args.proof;
  const id = binding.approval_id;
  const expires = Date.parse(binding.expires_at);
  if (!(expires > args.now.getTime())) {
    throw new LetKiteError(
      'approval_expired',
      `approval "${id}" expired at ${binding.expires_at} (this machine's clock)`,
      {
        layer: 'ceiling',
        approval_id: id,
        reason: 'expired',
      },
    );
  }
  if (expires - args.now.getTime() > MAX_APPROVAL_LIFETIME_MS) {
    throw refuse('expiry', `approval "${id}" claims to last until ${binding.expires_at}, longer than any approval can`);
  }
  const mine = binding.targets.filter((t) => t.machine_id === args.machineId);
  if (mine.length === 0) {
    throw refuse('other_machine', `approval "${id}" is not for this machine`, { approval_id: id });
  }
  const requestHash = requestSha256(args.op, args.params);
  if (!mine.some((t) => t.op === args.op && t.request_sha256 === requestHash)) {
    throw refuse('other_request', `approval "${id}" was given for a different ${args.op} than this one`, {
      approval_id: id,
    });
  }
  if (binding.policy_sha256 !== policySha256(args.policy)) {
    throw refuse('other_policy', `approval "${id}" was given under a different policy`, { approval_id: id });
  }
  const approver = args.approvers.find((a) => a.credential_id === assertion.credential_id);
  if (!approver) {
    throw refuse('unknown_approver', `approval "${id}" was signed by a passkey this machine does not trust`, {
      approval_id: id,
    });
  }

  const clientDataBytes = decodeBase64url(assertion.client_data_json);
  const authData = decodeBase64url(assertion.authenticator_data);
  const signature = decodeBase64url(assertion.signature);
  if (!clientDataBytes || !authData || !signature) throw refuse('malformed', 'the assertion is not base64url');
  let clientData: Record<string, unknown>;
  try {
    clientData = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(clientDataBytes));
  } catch {
    throw refuse('client_data', "the assertion's clientDataJSON is not JSON");
  }
  if (
    clientData.type !== 'webauthn.get' ||
    clientData.challenge !== approvalChallenge(binding) ||
    clientData.crossOrigin === true ||
    !originMatches(clientData.origin, approver.rp_id)
  ) {
    throw refuse('client_data', `the passkey did not sign approval "${id}" for ${approver.rp_id}`, { approval_id: id });
  }
  const rpIdHash = createHash('sha256').update(approver.rp_id).digest();
  const flags = authData[32] ?? 0;
  if (authData.length < 37 || !rpIdHash.equals(Buffer.from(authData.subarray(0, 32)))) {
    throw refuse('authenticator_data', `the assertion is not for the relying party "${approver.rp_id}"`);
  }
  if ((flags & 0x01) === 0 || (flags & 0x04) === 0) {
    throw refuse('user_verification', 'the passkey did not verify the person (the UP and UV flags must be set)');
  }

  let valid = false;
  try {
    const key = parseCoseKey(approver.public_key);
    const publicKey = createPublicKey({ key: key.jwk, format: 'jwk' });
    const signed = Buffer.concat([authData, createHash('sha256').update(clientDataBytes).digest()]);
    valid = verify(key.alg === 'EdDSA' ? null : 'sha256', signed, publicKey, signature);
  } catch {
    valid = false;
  }
  if (!valid) {
    throw refuse('signature', `the signature on approval "${id}" does not verify against ${approver.name}'s key`, {
      approval_id: id,
    });
  }
  return { approvalId: id, approver: approver.name };
}

/**
 * Approval ids this machine has used, kept until they expire (in the agent's state directory, so a restart
 * does not make an approval usable again).
 */
export class UsedApprovals {
  private readonly used = new Map<string, number>();
  private readonly file: string | null;

  constructor(stateDir: string | null) {
    this.file = stateDir === null ? null : join(stateDir, 'used-approvals.json');
    if (this.file === null) return;
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return;
    }
    // A damaged file must not forget used ids silently: refuse to start rather than accept replays.
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new Error(`${this.file} is damaged; the agent will not start without knowing which approvals it used`);
    }
    for (const [id, until] of Object.entries(data)) {
      if (typeof until === 'number') this.used.set(id, until);
    }
  }

  has(id: string): boolean {
    return this.used.has(id);
  }

  /** Remembers an id until it expires; throws when it cannot be written down (the call then does not run). */
  remember(id: string, expiresAt: number, now: number): void {
    for (const [known, until] of this.used) if (until <= now) this.used.delete(known);
    this.used.set(id, expiresAt);
    if (this.file === null) return;
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.used)), { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }
}

/**
 * The agent's approval check for every request: a request carrying a proof on a machine that pins approvers is
 * verified before anything else looks at it, and marked when it holds. A proof that does not hold refuses the
 * request (it claims an approval it does not have). On a machine without pinned approvers a proof cannot be
 * checked and counts for nothing.
 */
export class ApprovalVerifier {
  private readonly used: UsedApprovals;

  constructor(
    private readonly machineId: string,
    stateDir: string | null,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.used = new UsedApprovals(stateDir);
  }

  /** The request with its context marked as approved by a verified proof, or unchanged; throws when it fails. */
  check(frame: RequestFrame, ceiling: Ceiling | null): RequestFrame {
    const proof = frame.context.approval_proof;
    if (!proof || !ceiling || !verifiesApprovals(ceiling)) return frame;
    const now = this.now();
    const verified = checkApprovalProof({
      proof,
      op: frame.op,
      params: frame.params,
      policy: frame.context.policy,
      machineId: this.machineId,
      approvers: ceiling.approvers,
      now,
    });
    if (this.used.has(verified.approvalId)) {
      throw refuse('replayed', `approval "${verified.approvalId}" was already used on this machine`, {
        approval_id: verified.approvalId,
      });
    }
    try {
      this.used.remember(verified.approvalId, Date.parse(proof.binding.expires_at), now.getTime());
    } catch (err) {
      throw refuse('state', `cannot record the use of approval "${verified.approvalId}": ${String(err)}`);
    }
    return { ...frame, context: withVerifiedApproval(frame.context, verified) };
  }
}
