import { z } from 'zod';
import { defineTool } from '../define-tool';
import {
  DeletePathParams,
  DeletePathResult,
  GitDiffParams,
  GitDiffResult,
  GitStatusParams,
  GitStatusResult,
  ListDirParams,
  ListDirResult,
  ReadFileParams,
  ReadFileResult,
  WriteFileParams,
  WriteFileResult,
} from '../ops-files';
import { gatedCallErrors, MachineRef, reachingMachineErrors } from './common';

/**
 * The file tools (DESIGN §7). Inputs are the agent operation's parameters plus `machine` (and `confirm` for the
 * tools that change something); outputs are the operation's results, plus `masked_count` where text is handed to
 * the AI after masking known secret formats.
 */

const maskedCount = z.number().int().describe('How many secrets were replaced by *** before this reached you.');

const confirm = z
  .boolean()
  .optional()
  .describe(
    'Set after showing the person exactly what will change, when a previous call answered confirmation_required.',
  );

export const readFileInput = z.strictObject({ machine: MachineRef, ...ReadFileParams.shape });
export const readFile = defineTool({
  name: 'read_file',
  title: 'Read a file',
  description:
    "Reads a file (or a byte window of it with offset/length) as UTF-8 text or base64, with the whole file's size and SHA-256. A window longer than the machine's read limit answers too_large; without length, at most that limit is returned and truncated says the file goes on. Paths the file policy hides answer not_found, like missing ones.",
  input: readFileInput,
  output: ReadFileResult.extend({ masked_count: maskedCount }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // not_found: missing or hidden; too_large: length over the read limit; forbidden: the OS refused the open.
  errors: [...reachingMachineErrors, 'not_found', 'too_large', 'forbidden'],
});

export const listDirInput = z.strictObject({ machine: MachineRef, ...ListDirParams.shape });
export const listDir = defineTool({
  name: 'list_dir',
  title: 'List a directory',
  description:
    'Lists a directory, optionally recursively (depth up to 8) and filtered by a glob. Symlinks are listed as symlinks and not followed. Entries the file policy hides are left out.',
  input: listDirInput,
  output: ListDirResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  errors: [...reachingMachineErrors, 'not_found', 'forbidden'],
});

export const writeFileInput = z.strictObject({ machine: MachineRef, ...WriteFileParams.shape, confirm });
export const writeFile = defineTool({
  name: 'write_file',
  title: 'Write a file',
  description:
    'Replaces (or creates) a file atomically with the given content. Pass if_sha256 from read_file to refuse with conflict when the file changed meanwhile. A new file is owned by the run-as account; an existing one keeps its owner and, unless mode is given, its permission bits.',
  input: writeFileInput,
  output: WriteFileResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // blocked_by_policy: the path is read-only; conflict: if_sha256 does not match (details.current_sha256);
  // too_large: content over the write limit; unsupported: the agent cannot write as the run-as account.
  errors: [
    ...reachingMachineErrors,
    ...gatedCallErrors,
    'not_found',
    'conflict',
    'too_large',
    'forbidden',
    'unsupported',
  ],
  gated: true,
});

export const deletePathInput = z.strictObject({ machine: MachineRef, ...DeletePathParams.shape, confirm });
export const deletePath = defineTool({
  name: 'delete_path',
  title: 'Delete a file or directory',
  description:
    'Deletes a file, a symlink (not its target) or, with recursive: true, a directory and everything in it. Never deletes / or the top of an area the file policy allows.',
  input: deletePathInput,
  output: DeletePathResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // blocked_by_policy: read-only, a root of the allowed area, or a tree holding entries that may not be deleted;
  // too_large: the tree has more entries than one call deletes.
  errors: [...reachingMachineErrors, ...gatedCallErrors, 'not_found', 'too_large', 'forbidden'],
  gated: true,
});

export const gitStatusInput = z.strictObject({ machine: MachineRef, ...GitStatusParams.shape });
export const gitStatus = defineTool({
  name: 'git_status',
  title: 'Git status',
  description:
    'Shows the branch, ahead/behind counts and changed or untracked paths of the git repository holding a directory. Runs no hooks, filters, fsmonitor or external diff the repository configures.',
  input: gitStatusInput,
  output: GitStatusResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // not_found: missing, hidden, or not inside a repository; unsupported: git is missing or refuses the repository.
  errors: [...reachingMachineErrors, 'not_found', 'unsupported'],
});

export const gitDiffInput = z.strictObject({ machine: MachineRef, ...GitDiffParams.shape });
export const gitDiff = defineTool({
  name: 'git_diff',
  title: 'Git diff',
  description:
    'Shows the unified diff of a git repository: work tree against index (default), index against HEAD (staged), or against a revision. Paths the file policy hides are left out; output is capped (truncated).',
  input: gitDiffInput,
  output: GitDiffResult.extend({ masked_count: maskedCount }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // invalid_params also covers an unknown ref.
  errors: [...reachingMachineErrors, 'not_found', 'unsupported'],
});

/** The file tools, in the order DESIGN §7 lists them. */
export const fileTools = [readFile, listDir, writeFile, deletePath, gitStatus, gitDiff] as const;
