import type { FileRule } from './file-rule';
import type { FileAccess } from './levels';
import { minAccess } from './levels';
import { checkHome, type PathContext, pathSegments, patternCovers } from './path-pattern';

/** The path rules of one layer (a policy, or a ceiling). */
export interface FileReach extends PathContext {
  files: readonly FileRule[];
  deny: readonly string[];
}

/** True when a `deny` pattern covers the path: it must look as if it did not exist. */
export function isDenied(path: string, reach: Pick<FileReach, 'deny' | 'home' | 'ignoreCase'>): boolean {
  checkHome(reach.home);
  const segments = pathSegments(path);
  return reach.deny.some((pattern) => patternCovers(pattern, segments, reach) !== undefined);
}

/**
 * The access one layer gives a path. `deny` beats everything; otherwise the most specific covering `files`
 * entry decides: the one matching the deepest ancestor-or-self, then the more literal pattern, then (a true tie)
 * the stricter access. No covering entry: `none`.
 */
export function fileAccess(path: string, reach: FileReach): FileAccess {
  if (isDenied(path, reach)) return 'none';
  const segments = pathSegments(path);
  let best: { depth: number; literal: number; access: FileAccess } | undefined;
  for (const rule of reach.files) {
    const cover = patternCovers(rule.path, segments, reach);
    if (!cover) continue;
    const better =
      !best ||
      cover.depth > best.depth ||
      (cover.depth === best.depth && cover.literal > best.literal) ||
      (cover.depth === best.depth &&
        cover.literal === best.literal &&
        minAccess(rule.access, best.access) !== best.access);
    if (better) best = { ...cover, access: rule.access };
  }
  return best?.access ?? 'none';
}

/** Path rules made of several layers (policy, ceiling …): a path gets the least any layer gives it. */
export interface LayeredFileReach extends PathContext {
  /** Each layer decides on its own (most specific entry); the answers are combined with the minimum. */
  layers: readonly (readonly FileRule[])[];
  deny: readonly string[];
}

/** The access several layers give a path together. No layers at all gives `none` (fail closed). */
export function layeredFileAccess(path: string, reach: LayeredFileReach): FileAccess {
  if (reach.layers.length === 0 || isDenied(path, reach)) return 'none';
  let access: FileAccess = 'rw';
  for (const files of reach.layers) {
    access = minAccess(access, fileAccess(path, { files, deny: [], home: reach.home, ignoreCase: reach.ignoreCase }));
  }
  return access;
}
