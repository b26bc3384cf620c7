import { deletePath } from './delete-path';
import { gitDiff } from './git-diff';
import { gitStatus } from './git-status';
import { listDir } from './list-dir';
import { readFile } from './read-file';
import { writeFile } from './write-file';

/** Every file operation by its agent op name. */
export const fileOperations = {
  read_file: readFile,
  list_dir: listDir,
  write_file: writeFile,
  delete_path: deletePath,
  git_status: gitStatus,
  git_diff: gitDiff,
} as const;

export type FileOpName = keyof typeof fileOperations;
