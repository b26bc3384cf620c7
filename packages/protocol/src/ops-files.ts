import { z } from 'zod';
import { agentOp } from './agent-op';

/**
 * Parameters and results of the agent's file operations (ops `read_file`, `list_dir`, `write_file`,
 * `delete_path`, `git_status`, `git_diff`). The MCP tools of the same names (tools/files.ts) take these plus
 * `machine` (and `confirm`), and answer with exactly these results. The agent re-validates every field.
 *
 * Paths are absolute paths on the machine. `..` is collapsed lexically before any symlink is followed
 * (`/a/link/../b` means `/a/b`). A path the file policy hides answers `not_found` exactly as a missing one does.
 */

/** An absolute path on the machine (checked for being absolute by the agent, which knows its platform). */
export const AbsolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'a path must not contain NUL bytes')
  .describe('Absolute path on the machine.');

export const fileEncodings = ['utf8', 'base64'] as const;
/** How file content travels: UTF-8 text, or base64 for bytes. */
export const FileEncoding = z.enum(fileEncodings);
export type FileEncoding = z.infer<typeof FileEncoding>;

/**
 * Permission bits for a written file: an octal string (`"0644"`, `"644"`, `"0o644"`) or the plain number (420).
 * Only the rwx bits: setuid, setgid and sticky cannot be set through the file tools.
 */
export const FileMode = z
  .union([
    z.string().regex(/^(0o?)?[0-7]{3}$/, 'mode must be three octal digits such as "0644"'),
    z.number().int().min(0).max(0o777),
  ])
  .describe('Permission bits: an octal string such as "0644" (preferred) or its numeric value (420).');
export type FileMode = z.infer<typeof FileMode>;

/** The numeric permission bits of a FileMode (`"0644"` → 0o644). */
export function fileModeBits(mode: FileMode): number {
  return typeof mode === 'number' ? mode : Number.parseInt(mode.replace(/^0o?/, ''), 8);
}

export const ReadFileParams = z.object({
  path: AbsolutePath,
  offset: z.number().int().min(0).optional().describe('Byte offset to start reading at (default 0).'),
  length: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Bytes to read (default and maximum: the machine's read limit; more answers too_large)."),
  encoding: FileEncoding.optional().describe(
    'utf8 (default) or base64. Content that is not valid UTF-8 is returned as base64 whatever was asked; the result says which.',
  ),
});
export type ReadFileParams = z.infer<typeof ReadFileParams>;

export const ReadFileResult = z.object({
  content: z.string(),
  /** The encoding of `content`: base64 when asked, or when the bytes are not valid UTF-8. */
  encoding: FileEncoding,
  /** Size of the whole file in bytes. */
  size: z.number().int(),
  /** SHA-256 (hex) of the whole file, whatever window was read; pass it as `if_sha256` to write safely. */
  sha256: z.string(),
  /** Byte offset the content starts at. */
  offset: z.number().int(),
  /** Bytes of the file the content covers; the next window starts at `offset + length`. */
  length: z.number().int(),
  /** The file goes on past the returned window. */
  truncated: z.boolean(),
});
export type ReadFileResult = z.infer<typeof ReadFileResult>;

/** Most bytes of margin the gateway may ask for on each side of a read window. */
export const MAX_READ_MARGIN_BYTES = 65_536;

/**
 * The agent op `read_file` as the gateway sends it: the tool's parameters plus `margin`, bytes read on each side of
 * the window so that the gateway masks a secret the window's edge cuts through whole (the AI never sees them).
 */
export const ReadFileWindowParams = ReadFileParams.extend({
  margin: z.number().int().min(0).max(MAX_READ_MARGIN_BYTES).optional(),
});
export type ReadFileWindowParams = z.infer<typeof ReadFileWindowParams>;

/** The agent's answer: the tool's result plus, when a margin was asked, the bytes around the window in base64. */
export const ReadFileWindowResult = ReadFileResult.extend({
  before: z.string().optional(),
  after: z.string().optional(),
});
export type ReadFileWindowResult = z.infer<typeof ReadFileWindowResult>;

export const direntTypes = ['file', 'dir', 'symlink', 'other'] as const;
/** What a directory entry is; symlinks are reported as such and never followed. */
export const DirentType = z.enum(direntTypes);
export type DirentType = z.infer<typeof DirentType>;

export const DirEntry = z.object({
  path: z.string(),
  name: z.string(),
  type: DirentType,
  size: z.number().int(),
  /** Permission bits as four octal digits, e.g. "0644". */
  mode: z.string(),
  /** Last modification, ISO 8601. */
  mtime: z.string(),
});
export type DirEntry = z.infer<typeof DirEntry>;

export const ListDirParams = z.object({
  path: AbsolutePath,
  depth: z
    .number()
    .int()
    .min(1)
    .max(8)
    .optional()
    .describe('How deep to descend (1 = this directory only, the default; at most 8). Symlinks are not followed.'),
  glob: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe(
      'Only list entries matching this glob (*, **, ?, [abc], {a,b}). Without a "/" it matches the entry name, with one the path relative to `path`.',
    ),
  include_hidden: z.boolean().optional().describe('Include names starting with "." (default false).'),
});
export type ListDirParams = z.infer<typeof ListDirParams>;

export const ListDirResult = z.object({
  /** Breadth first, sorted by name within each directory. */
  entries: z.array(DirEntry),
  /** More entries exist than the listing limit allowed. */
  truncated: z.boolean(),
});
export type ListDirResult = z.infer<typeof ListDirResult>;

export const WriteFileParams = z.object({
  path: AbsolutePath,
  content: z
    .string()
    .max(64 * 1024 * 1024)
    .describe("The whole new content (limited by the machine's write limit)."),
  encoding: FileEncoding.optional().describe('Encoding of `content`: utf8 (default) or base64.'),
  mode: FileMode.optional(),
  create_dirs: z.boolean().optional().describe('Create missing parent directories (default false).'),
  if_sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'if_sha256 must be 64 hex digits')
    .optional()
    .describe(
      'Only write if the file still has this SHA-256 (from read_file); otherwise, or if the file is missing, answers conflict.',
    ),
});
export type WriteFileParams = z.infer<typeof WriteFileParams>;

export const WriteFileResult = z.object({
  bytes: z.number().int(),
  sha256: z.string(),
});
export type WriteFileResult = z.infer<typeof WriteFileResult>;

export const DeletePathParams = z.object({
  path: AbsolutePath,
  recursive: z
    .boolean()
    .optional()
    .describe('Required to delete a directory, with everything in it. A symlink is removed, never followed.'),
});
export type DeletePathParams = z.infer<typeof DeletePathParams>;

export const DeletePathResult = z.object({
  deleted: z.literal(true),
  type: DirentType,
});
export type DeletePathResult = z.infer<typeof DeletePathResult>;

/**
 * One side of a `git status` entry: `.` unmodified, `M` modified, `T` type changed, `A` added, `D` deleted,
 * `R` renamed, `C` copied, `U` unmerged, `?` untracked.
 */
export const gitStatusCodes = ['.', 'M', 'T', 'A', 'D', 'R', 'C', 'U', '?'] as const;
export const GitStatusCode = z.enum(gitStatusCodes);
export type GitStatusCode = z.infer<typeof GitStatusCode>;

export const GitStatusEntry = z.object({
  /** Relative to the repository's top level. */
  path: z.string(),
  /** The path before a rename or copy. */
  orig_path: z.string().optional(),
  index: GitStatusCode,
  worktree: GitStatusCode,
});
export type GitStatusEntry = z.infer<typeof GitStatusEntry>;

export const GitStatusParams = z.object({
  path: AbsolutePath.describe('A directory inside the repository.'),
});
export type GitStatusParams = z.infer<typeof GitStatusParams>;

export const GitStatusResult = z.object({
  /** Top level of the work tree. */
  root: z.string(),
  /** Current branch; null when HEAD is detached. */
  branch: z.string().nullable(),
  /** Commit id of HEAD; null before the first commit. */
  head: z.string().nullable(),
  upstream: z.string().nullable(),
  ahead: z.number().int(),
  behind: z.number().int(),
  /** Changed and untracked paths the file policy lets the caller see. */
  entries: z.array(GitStatusEntry),
  truncated: z.boolean(),
});
export type GitStatusResult = z.infer<typeof GitStatusResult>;

export const GitDiffParams = z.object({
  path: AbsolutePath.describe('A directory inside the repository.'),
  staged: z.boolean().optional().describe('Diff the index against HEAD (or `ref`) instead of the work tree.'),
  ref: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[A-Za-z0-9_./@^~{}-]+$/, 'ref must be a revision such as HEAD~1, main or a1b2c3..d4e5f6')
    .refine((r) => !r.startsWith('-'), 'ref must not start with "-"')
    .optional()
    .describe('Compare against this revision (or range) instead of the index.'),
  paths: z
    .array(z.string().min(1).max(4096))
    .max(256)
    .optional()
    .describe('Limit the diff to these paths (absolute, or relative to `path`).'),
});
export type GitDiffParams = z.infer<typeof GitDiffParams>;

export const GitDiffResult = z.object({
  /** Unified diff of the paths the file policy lets the caller see. */
  diff: z.string(),
  truncated: z.boolean(),
});
export type GitDiffResult = z.infer<typeof GitDiffResult>;

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const fileOps = {
  read_file: agentOp(ReadFileWindowParams, ReadFileWindowResult, 'call'),
  list_dir: agentOp(ListDirParams, ListDirResult, 'call'),
  write_file: agentOp(WriteFileParams, WriteFileResult, 'call'),
  delete_path: agentOp(DeletePathParams, DeletePathResult, 'call'),
  git_status: agentOp(GitStatusParams, GitStatusResult, 'call'),
  git_diff: agentOp(GitDiffParams, GitDiffResult, 'call'),
} as const;
