import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The guard of a pure package (CONVENTIONS §2, §10), shared by the packages' `guard.test.ts`: every non-test source
 * under `srcDir`, subfolders included (a new folder is guarded too), and the imports in it that break purity — a
 * `node:` module, anything from `apps/`, or a workspace package not in `allowedWorkspacePackages`.
 */
export function pureImportOffences(
  srcDir: string,
  allowedWorkspacePackages: readonly string[],
): { sources: number; offending: string[] } {
  const files = (readdirSync(srcDir, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .sort();
  const offending: string[] = [];
  for (const file of files) {
    const source = readFileSync(join(srcDir, file), 'utf8');
    for (const m of source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1] ?? '';
      const workspace = spec.startsWith('@letkite/') && !allowedWorkspacePackages.includes(spec);
      if (spec.startsWith('node:') || /(^|\/)apps\//.test(spec) || workspace) {
        offending.push(`${relative(srcDir, join(srcDir, file))}: ${spec}`);
      }
    }
  }
  return { sources: files.length, offending };
}
