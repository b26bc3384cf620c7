import { posix } from 'node:path';
import type { ClampedPolicy } from '@letkite/ceiling';
import { fileAccess, layeredFileAccess, type Policy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import type { Machine } from '../store/types';

/**
 * The gateway's early check of a path a call reads or writes (REVIEW §3-4), on what it can know without the
 * machine: the caller's file rules clamped to the machine's reported ceiling, and the deny lists. A path they hide
 * answers `not_found`, exactly like a missing one (so hidden files cannot be probed); a path they make read-only
 * refuses a write with `blocked_by_ceiling` when the policy alone would allow it, else `blocked_by_policy`.
 * Relative paths and rules using `~` (the run-as account's home, which only the agent knows) are left to the
 * agent, which checks every path again on the real file (symlinks included).
 */
export function checkPath(
  call: { machine: Pick<Machine, 'name'>; policy: Pick<Policy, 'files' | 'deny'>; clamped: ClampedPolicy },
  given: string,
  mode: 'read' | 'write',
): void {
  const { clamped, policy } = call;
  const patterns = [...clamped.file_layers.flat().map((r) => r.path), ...clamped.deny];
  const path = posix.normalize(given);
  if (!path.startsWith('/') || path.includes('\0') || patterns.some((p) => p.startsWith('~'))) return;
  const access = layeredFileAccess(path, { layers: clamped.file_layers, deny: clamped.deny, home: '/' });
  if (access === 'none') throw new LetKiteError('not_found', `no such file: "${given}"`);
  if (mode !== 'write' || access !== 'ro') return;
  const policyAlone = fileAccess(path, { files: policy.files, deny: policy.deny, home: '/' });
  throw policyAlone === 'rw'
    ? new LetKiteError('blocked_by_ceiling', `machine "${call.machine.name}"'s ceiling makes "${given}" read-only`, {
        layer: 'ceiling',
      })
    : new LetKiteError('blocked_by_policy', `"${given}" is read-only for this connection`, { layer: 'policy' });
}
