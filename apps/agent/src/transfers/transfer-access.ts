import { layeredFileAccess } from '@letkite/policy';
import { LetKiteError, type RequestContext } from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';
import type { FileAccess } from '../files';
import { requestPolicy } from '../guard/request-policy';
import { resolveRunAs } from '../guard/run-as';

/**
 * The file reach of a transfer on this machine: the request's policy clamped to the ceiling, as for the file
 * tools, and only when the ceiling allows transfers at all (`transfers = true`).
 */
export function transferAccess(context: RequestContext, ceiling: CeilingState): FileAccess {
  const rp = requestPolicy(context.policy, ceiling);
  if (!rp.clamped.transfers) {
    throw new LetKiteError('blocked_by_ceiling', "this machine's ceiling does not allow file transfers", {
      layer: 'ceiling',
      key: 'transfers',
    });
  }
  const account = resolveRunAs(rp.clamped.run_as);
  const home = account.home;
  return {
    access: (path) => layeredFileAccess(path, { layers: rp.clamped.file_layers, deny: rp.clamped.deny, home }),
    maxReadBytes: 0,
    maxWriteBytes: 0,
    protectedPaths: rp.protectedPaths,
    ...(account.switchUser ? { runAs: { uid: account.uid, gid: account.gid } } : {}),
  };
}
