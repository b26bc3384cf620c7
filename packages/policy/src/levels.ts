import { z } from 'zod';

/**
 * How commands may run, least first: `off` (no commands, no terminals), `sandboxed` (Landlock on Linux, Seatbelt
 * on macOS), `full` (as the run-as account, unconfined). Windows agents know only `off` and `full`.
 */
export const shellLevels = ['off', 'sandboxed', 'full'] as const;
export const ShellLevel = z.enum(shellLevels);
export type ShellLevel = z.infer<typeof ShellLevel>;

/** Screen tools, least first: `off` (not even listed), `observe` (screenshots), `act` (mouse and keyboard). */
export const guiLevels = ['off', 'observe', 'act'] as const;
export const GuiLevel = z.enum(guiLevels);
export type GuiLevel = z.infer<typeof GuiLevel>;

/** What a `files` entry grants: read-only or read-write. */
export const fileAccessLevels = ['ro', 'rw'] as const;
export const FileAccessLevel = z.enum(fileAccessLevels);
export type FileAccessLevel = z.infer<typeof FileAccessLevel>;

/** The answer of the path rules for one path, least first; `none` also covers denied paths. */
export const fileAccessResults = ['none', 'ro', 'rw'] as const;
export type FileAccess = (typeof fileAccessResults)[number];

function leastOf<T extends string>(order: readonly T[], a: T, b: T): T {
  return order.indexOf(a) <= order.indexOf(b) ? a : b;
}

/** The stricter of two shell levels. */
export function minShell(a: ShellLevel, b: ShellLevel): ShellLevel {
  return leastOf(shellLevels, a, b);
}

/** The stricter of two GUI levels. */
export function minGui(a: GuiLevel, b: GuiLevel): GuiLevel {
  return leastOf(guiLevels, a, b);
}

/** The stricter of two file-access answers. */
export function minAccess(a: FileAccess, b: FileAccess): FileAccess {
  return leastOf(fileAccessResults, a, b);
}

/** True when `level` is at least `needed` (e.g. `atLeastGui('act', 'observe')`). */
export function atLeastGui(level: GuiLevel, needed: GuiLevel): boolean {
  return guiLevels.indexOf(level) >= guiLevels.indexOf(needed);
}
