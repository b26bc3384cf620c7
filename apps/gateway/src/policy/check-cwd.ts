import { posix } from 'node:path';
import type { ClampedPolicy } from '@letkite/ceiling';
import { fileAccess, layeredFileAccess, type Policy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';

/**
 * The gateway's early check of a command's working directory (issue #10 item 4), on what it can know without the
 * machine: a directory the clamped file rules (policy ∧ reported ceiling, deny lists) leave out could not be read
 * by the command, so starting there is refused without asking the machine whether it exists. Relative
 * directories and rules using `~` depend on the run-as account's home: the agent decides those alone, and it
 * checks every directory again on the real path (symlinks included).
 */
export function refuseUnreachableCwd(
  policy: Pick<Policy, 'files' | 'deny'>,
  clamped: Pick<ClampedPolicy, 'file_layers' | 'deny'>,
  cwd: string | undefined,
): void {
  if (cwd === undefined || !cwd.startsWith('/') || cwd.includes('\0')) return;
  const patterns = [...clamped.file_layers.flat().map((r) => r.path), ...clamped.deny];
  if (patterns.some((p) => p.startsWith('~'))) return;
  const path = posix.normalize(cwd);
  if (layeredFileAccess(path, { layers: clamped.file_layers, deny: clamped.deny, home: '/' }) !== 'none') return;
  const byCeiling = fileAccess(path, { files: policy.files, deny: policy.deny, home: '/' }) !== 'none';
  throw new LetKiteError(
    byCeiling ? 'blocked_by_ceiling' : 'blocked_by_policy',
    `the working directory "${cwd}" is outside what the ${byCeiling ? "machine's ceiling" : 'policy'} lets commands read`,
    { layer: byCeiling ? 'ceiling' : 'policy', key: 'cwd' },
  );
}
