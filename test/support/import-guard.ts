import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The guard of a pure package (CONVENTIONS §2, §10), shared by the packages' `guard.test.ts`: every non-test source
 * under `srcDir`, subfolders included (a new folder is guarded too), and the imports in it that break purity — a
 * `node:` module, anything from `apps/`, or a workspace package not in `allowedWorkspacePackages` — and any use of
 * Node's `Buffer` global, which needs no import.
 */
export function pureImportOffences(
  srcDir: string,
  allowedWorkspacePackages: readonly string[],
): { sources: number; offending: string[] } {
  // A guard's own `__fixtures__` hold offending code on purpose (to prove that guard sees it); they are not sources.
  const files = (readdirSync(srcDir, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.split('/').includes('__fixtures__'))
    .sort();
  const offending: string[] = [];
  for (const file of files) {
    const source = readFileSync(join(srcDir, file), 'utf8');
    // Buffer is a Node global: no import shows it, so look for the name itself (comments aside).
    const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
    if (/\bBuffer\b/.test(code)) offending.push(`${file}: the Buffer global`);
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
