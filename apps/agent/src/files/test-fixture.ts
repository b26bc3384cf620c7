import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isLetKiteError } from '@letkite/protocol';
import type { AccessLevel, FileAccess } from './resolve-path';

/**
 * Test-only: a temp directory and a FileAccess over it with the shape of the real rules (deepest root wins, deny
 * covers a subtree, `*.pem` hidden anywhere), small enough to read at a glance.
 */
export interface Area {
  dir: string;
  cleanup(): Promise<void>;
}

export async function makeArea(): Promise<Area> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'letkite-files-')));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface Rules {
  roots: Record<string, 'ro' | 'rw'>;
  deny?: string[];
  maxReadBytes?: number;
  maxWriteBytes?: number;
  runAs?: { uid: number; gid: number };
}

export function accessFor(rules: Rules): FileAccess {
  const under = (path: string, prefix: string) =>
    path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
  return {
    access(path: string): AccessLevel {
      if ((rules.deny ?? []).some((prefix) => under(path, prefix))) return 'none';
      if (path.split('/').some((segment) => segment.endsWith('.pem'))) return 'none';
      let best: { length: number; level: AccessLevel } | undefined;
      for (const [root, level] of Object.entries(rules.roots)) {
        if (under(path, root) && (!best || root.length > best.length)) best = { length: root.length, level };
      }
      return best?.level ?? 'none';
    },
    maxReadBytes: rules.maxReadBytes ?? 1024 * 1024,
    maxWriteBytes: rules.maxWriteBytes ?? 1024 * 1024,
    ...(rules.runAs ? { runAs: rules.runAs } : {}),
  };
}

/** What a refusal looks like from outside: code, message, details. Fails the test if nothing was thrown. */
export async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (err) {
    if (isLetKiteError(err)) return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
  throw new Error('expected a refusal, but the call succeeded');
}
