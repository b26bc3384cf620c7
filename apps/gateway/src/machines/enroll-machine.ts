import { createPublicKey } from 'node:crypto';
import { type EnrollRequest, type EnrollResponse, LetKiteError } from '@letkite/protocol';
import { hashSecret, newId } from '../auth/secrets';
import type { Store } from '../store/types';

/** Machine names: what people and AIs type, so keep them plain. */
const machineNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function normaliseMachineName(raw: string): string {
  const cleaned = raw
    .trim()
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 63);
  return cleaned.length > 0 ? cleaned : 'machine';
}

/**
 * Spends a one-time join token on a new machine with the agent's Ed25519 public key, and hands back the gateway's
 * identity key for the agent to pin. A reused, expired or unknown token is refused with `invalid_token` (the same
 * answer for all three, so tokens cannot be probed).
 */
export async function enrollMachine(
  ctx: { store: Store; now: Date; gatewayPublicKey: string },
  input: EnrollRequest,
): Promise<EnrollResponse> {
  try {
    const key = createPublicKey({ key: Buffer.from(input.public_key, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('not ed25519');
  } catch {
    throw new LetKiteError('invalid_params', 'public_key must be an Ed25519 public key (SPKI DER, base64)');
  }
  const join = await ctx.store.findJoinTokenByHash(hashSecret(input.join_token));
  const nowIso = ctx.now.toISOString();
  const refused = new LetKiteError('invalid_token', 'the join token is unknown, already used or expired');
  if (!join || join.usedAt !== null || join.expiresAt <= nowIso) throw refused;

  const name = normaliseMachineName(input.name ?? input.info.hostname);
  if (!machineNamePattern.test(name)) throw new LetKiteError('invalid_params', `machine name "${name}" is not valid`);
  const id = newId('mch');
  // Names are unique in the account (the store decides, in the enrollment's transaction): a host name already taken
  // gets a suffix (`vm-2`); a name the person chose with --name is theirs to change, so it is refused instead.
  const outcome = await ctx.store.enrollMachine(
    join.id,
    {
      id,
      accountId: join.accountId,
      name,
      publicKey: input.public_key,
      hostname: input.info.hostname,
      os: input.info.os,
      osRelease: input.info.os_release ?? null,
      arch: input.info.arch,
      agentVersion: input.info.version,
      labels: [],
      ceiling: null,
      ceilingSource: null,
      ceilingError: null,
      enrolledAt: nowIso,
      lastSeenAt: null,
    },
    {
      accountId: join.accountId,
      at: nowIso,
      actor: `join_token:${join.id}`,
      action: 'machine.enroll',
      target: id,
      outcome: 'ok',
      details: { name, hostname: input.info.hostname, os: input.info.os, arch: input.info.arch },
    },
    input.name === undefined ? 'suffix' : 'refuse',
  );
  if (!outcome.ok && outcome.reason === 'name_taken') {
    throw new LetKiteError(
      'conflict',
      `a machine named "${name}" is already enrolled in this account; choose another with --name (the join token is still unused)`,
      { name },
    );
  }
  if (!outcome.ok) throw refused;
  return { machine_id: id, name: outcome.name, gateway_public_key: ctx.gatewayPublicKey };
}
