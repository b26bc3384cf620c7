import { fileAccess, layeredFileAccess } from '@letkite/policy';
import { isLetKiteError, LetKiteError, type RequestContext } from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';
import type { FileAccess } from '../files';
import { FileWorker } from '../files/file-worker';
import { type FileOpName, fileOperations } from '../files/operations';
import { authorizeGatedTool } from '../guard/authorize-command';
import { requestPolicy } from '../guard/request-policy';
import { resolveRunAs } from '../guard/run-as';

/**
 * Largest read window and write content: a request or response frame is at most 1 MiB, and base64 grows data by
 * a third. Bigger files move with the transfer tools.
 */
export const MAX_FILE_READ_BYTES = 512 * 1024;
export const MAX_FILE_WRITE_BYTES = 512 * 1024;

export type { FileOpName };

/** One worker per run-as account the agent has had to switch to. */
const workers = new Map<string, FileWorker>();

export function stopFileWorkers(): void {
  for (const w of workers.values()) w.stop();
  workers.clear();
}

/**
 * A file tool on the agent: the file reach is the request's policy clamped to this machine's ceiling (paths the
 * deny lists name look missing). A refusal that only the ceiling causes is reported as `blocked_by_ceiling`.
 */
export async function runFileOp(
  op: FileOpName,
  params: unknown,
  context: RequestContext,
  ceiling: CeilingState,
): Promise<unknown> {
  const rp = requestPolicy(context.policy, ceiling);
  const account = resolveRunAs(rp.clamped.run_as);
  const home = account.home;
  if (op === 'write_file' || op === 'delete_path') authorizeGatedTool(rp, op, context);
  const access: FileAccess = {
    access: (path) => layeredFileAccess(path, { layers: rp.clamped.file_layers, deny: rp.clamped.deny, home }),
    maxReadBytes: MAX_FILE_READ_BYTES,
    maxWriteBytes: MAX_FILE_WRITE_BYTES,
    protectedPaths: rp.protectedPaths,
  };
  try {
    if (!account.switchUser) return await fileOperations[op](params as never, access);
    // A root agent serving another run-as account: the operation runs in a worker process as that account, so
    // the OS's own permissions apply on top of the file rules.
    const key = `${account.uid}:${account.gid}`;
    let worker = workers.get(key);
    if (!worker) {
      worker = new FileWorker(account, () => {});
      workers.set(key, worker);
    }
    return await worker.run({
      op,
      params,
      reach: { layers: rp.clamped.file_layers, deny: rp.clamped.deny, home, protectedPaths: [...rp.protectedPaths] },
      limits: { maxReadBytes: MAX_FILE_READ_BYTES, maxWriteBytes: MAX_FILE_WRITE_BYTES },
    });
  } catch (err) {
    if (isLetKiteError(err, 'blocked_by_policy')) {
      const path = (params as { path?: unknown }).path;
      const policyAlone =
        typeof path === 'string' && path.startsWith('/')
          ? fileAccess(path, { files: rp.policy.files, deny: rp.policy.deny, home })
          : 'none';
      if (policyAlone === 'rw') {
        throw new LetKiteError('blocked_by_ceiling', `this machine's ceiling makes "${String(path)}" read-only`, {
          layer: 'ceiling',
          key: 'files',
        });
      }
    }
    throw err;
  }
}
