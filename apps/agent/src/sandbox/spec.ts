import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';

/** The helper's limits (MAX_ENTRIES, MAX_PORTS in native/letkite-sandbox.c). */
export const MAX_SANDBOX_PATHS = 256;
export const MAX_SANDBOX_PORTS = 64;

const AbsolutePath = z
  .string()
  .min(1)
  .max(4095)
  .refine((p) => p.startsWith('/') && !p.includes('\0'), { message: 'must be an absolute path without NUL' });

/**
 * What one sandboxed command may touch, on any platform. Paths are concrete and absolute: the caller resolved
 * `~` and globs (a glob deny entry is expanded by the caller under the granted roots).
 * - `readPaths`: read (and execute) beneath each path. System directories are always readable: see README.
 * - `writePaths`: read, write, create and delete beneath each path.
 * - `denyPaths`: hidden even inside a granted tree: a directory looks empty, a file reads as empty, neither can
 *   be written. A path that does not exist is ignored (there is nothing to hide).
 * - `tmpDir`: an existing private directory (created and removed by the caller, owned by the run-as account),
 *   read/write for the command; point `TMPDIR` at it.
 * - `allowTcp`: `false` — no TCP bind or connect at all; `true` — TCP unrestricted; a list of ports — connect to
 *   those ports only (any host), never bind. An empty list means `false`.
 */
export const SandboxSpec = z.strictObject({
  readPaths: z.array(AbsolutePath).max(MAX_SANDBOX_PATHS),
  writePaths: z.array(AbsolutePath).max(MAX_SANDBOX_PATHS),
  denyPaths: z.array(AbsolutePath).max(MAX_SANDBOX_PATHS),
  tmpDir: AbsolutePath,
  allowTcp: z.union([z.boolean(), z.array(z.number().int().min(1).max(65535)).max(MAX_SANDBOX_PORTS)]),
});
export type SandboxSpec = z.infer<typeof SandboxSpec>;

/** Validates a spec; a bad one is a bug in the caller, reported as `invalid_params` quoting the first problem. */
export function parseSandboxSpec(spec: unknown): SandboxSpec {
  const result = SandboxSpec.safeParse(spec);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.join('.') || 'spec';
  throw new LetKiteError('invalid_params', `invalid sandbox spec: ${where}: ${issue?.message ?? 'invalid'}`, {
    issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
  });
}
