import { fileOps } from '@letkite/protocol/ops-files';
import { type FileOpName, runFileOp, stopFileWorkers } from '../../executors/file-op';
import type { Feature, OpHandler } from '../feature';

function fileOp<K extends FileOpName>(): OpHandler<K> {
  return (r) => runFileOp(r.op, r.params, r.context, r.ceiling);
}

/** The file tools and git; their workers (one per run-as account) stop with the agent. */
export function filesFeature(): Feature<FileOpName> {
  return {
    schemas: fileOps,
    handlers: {
      read_file: fileOp(),
      list_dir: fileOp(),
      write_file: fileOp(),
      delete_path: fileOp(),
      git_status: fileOp(),
      git_diff: fileOp(),
    },
    close: stopFileWorkers,
  };
}
