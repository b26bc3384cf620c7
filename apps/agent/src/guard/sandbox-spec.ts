import { existsSync } from 'node:fs';
import type { ClampedPolicy } from '@letkite/ceiling';
import { layeredFileAccess, parseTunnelTarget } from '@letkite/policy';
import type { SandboxSpec } from '../sandbox';

const hasGlob = (p: string) => /[*?[]/.test(p);

/** A file rule's path as a concrete directory, or null when it is a glob Landlock cannot express. */
export function concretePath(pattern: string, home: string): string | null {
  if (pattern === '*' || pattern === '**') return '/';
  const expanded = pattern === '~' ? home : pattern.startsWith('~/') ? `${home}${pattern.slice(1)}` : pattern;
  if (!expanded.startsWith('/') || hasGlob(expanded)) return null;
  return expanded.length > 1 ? expanded.replace(/\/+$/, '') : expanded;
}

/**
 * Landlock grants for a sandboxed command, from the clamped policy's file layers: every concrete rule path gets
 * the access all layers agree on (`layeredFileAccess`). Glob rules are skipped, which only narrows what the
 * command may touch. Concrete deny paths are hidden; glob deny entries (`**` + `/*.pem`) cannot be hidden by a
 * mount and are enforced by the file tools only (documented in the agent README).
 */
export function sandboxSpecFor(clamped: ClampedPolicy, home: string, tmpDir: string): SandboxSpec {
  const candidates = new Set<string>();
  for (const layer of clamped.file_layers) {
    for (const rule of layer) {
      const p = concretePath(rule.path, home);
      if (p && existsSync(p)) candidates.add(p);
    }
  }
  const readPaths: string[] = [];
  const writePaths: string[] = [];
  for (const p of candidates) {
    const access = layeredFileAccess(p, { layers: clamped.file_layers, deny: [], home });
    if (access === 'rw') writePaths.push(p);
    else if (access === 'ro') readPaths.push(p);
  }
  const denyPaths = clamped.deny
    .map((d) => concretePath(d, home))
    .filter((p): p is string => p !== null && p !== '/' && existsSync(p));
  const ports = new Set<number>();
  let anyPort = false;
  for (const t of clamped.tunnel_targets) {
    const parsed = parseTunnelTarget(t);
    if (!parsed) continue;
    const { portLow, portHigh } = parsed;
    // A wide range is "any port" for Landlock (it has no ranges; the helper takes at most 64 ports).
    if (portHigh - portLow >= 64) anyPort = true;
    else for (let port = portLow; port <= portHigh; port++) ports.add(port);
  }
  if (ports.size > 64) anyPort = true;
  return {
    readPaths,
    writePaths,
    denyPaths: [...new Set(denyPaths)],
    tmpDir,
    allowTcp: anyPort ? true : ports.size > 0 ? [...ports] : false,
  };
}
