/**
 * The file worker: a child of the agent started as the ceiling's run-as account, so every file operation (and
 * git) happens with that account's OS rights on top of LetKite's own file rules (DESIGN §3, layer 5). It serves
 * requests over the IPC channel and exits when the agent goes away.
 */
import { layeredFileAccess } from '@letkite/policy';
import { ErrorCode, LetKiteError, toLetKiteError } from '@letkite/protocol';
import { fileOperations } from './operations';
import type { WorkerRequest, WorkerResponse } from './worker-protocol';

function reply(message: WorkerResponse): void {
  process.send?.(message);
}

process.on('disconnect', () => process.exit(0));
process.on('message', (raw: WorkerRequest) => {
  void (async () => {
    try {
      const op = fileOperations[raw.op as keyof typeof fileOperations];
      if (!op) throw new LetKiteError('unsupported', `no file operation "${raw.op}"`);
      const { layers, deny, home, protectedPaths = [] } = raw.reach;
      const result = await op(raw.params as never, {
        access: (path) => layeredFileAccess(path, { layers, deny, home }),
        maxReadBytes: raw.limits.maxReadBytes,
        maxWriteBytes: raw.limits.maxWriteBytes,
        protectedPaths,
      });
      reply({ id: raw.id, ok: true, result });
    } catch (err) {
      const e = toLetKiteError(err);
      const payload = e.toPayload();
      reply({ id: raw.id, ok: false, error: { ...payload, code: ErrorCode.parse(payload.code) } });
    }
  })();
});
