import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { afterAll, expect, test } from 'vitest';

// The apps' "never" edges (DESIGN, REVIEW-architecture §7-5): the agent and the gateway meet only through
// @letkite/protocol, never by importing each other, and the web app (bundled for a browser) imports no app. A
// relative path reaches another app as surely as a package name does, so both are resolved.
const forbidden: Record<string, readonly string[]> = {
  agent: ['gateway'],
  gateway: ['agent'],
  webapp: ['agent', 'gateway', 'cli'],
};

function importSpecs(source: string): string[] {
  const specs: string[] = [];
  for (const m of source.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) specs.push(m[1] ?? '');
  for (const m of source.matchAll(/\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) specs.push(m[1] ?? '');
  return specs;
}

/** The app (folder under `appsDir`) an import from `file` lands in, or null for anything else. */
function targetApp(appsDir: string, file: string, spec: string): string | null {
  const pkg = /^@letkite\/([^/]+)/.exec(spec);
  if (pkg) return pkg[1] ?? null;
  if (!spec.startsWith('.')) return null;
  const rel = relative(appsDir, resolve(dirname(file), spec));
  return rel.startsWith('..') ? null : (rel.split(sep)[0] ?? null);
}

/** Every import in `appsDir/<app>/src` (tests included) that takes a forbidden edge, and how many files were read. */
function forbiddenEdges(appsDir: string): { files: Record<string, number>; offending: string[] } {
  const files: Record<string, number> = {};
  const offending: string[] = [];
  for (const [app, never] of Object.entries(forbidden)) {
    const src = join(appsDir, app, 'src');
    files[app] = 0;
    for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(ts|tsx|js|mjs)$/.test(entry.name)) continue;
      files[app] += 1;
      const path = join(entry.parentPath, entry.name);
      for (const spec of importSpecs(readFileSync(path, 'utf8'))) {
        const target = targetApp(appsDir, path, spec);
        if (target !== null && never.includes(target)) offending.push(`${relative(appsDir, path)}: ${spec}`);
      }
    }
  }
  return { files, offending };
}

const fixtures: string[] = [];
afterAll(() => {
  for (const dir of fixtures) rmSync(dir, { recursive: true, force: true });
});

test('no app takes a forbidden edge: agent and gateway never import each other, the web app imports no app', () => {
  const { files, offending } = forbiddenEdges(resolve(import.meta.dirname, '../apps'));
  for (const app of Object.keys(forbidden)) expect(files[app], app).toBeGreaterThan(15);
  expect(offending).toEqual([]);
});

test('the edge guard sees a package import, a deep relative import and a dynamic import of another app', () => {
  const apps = mkdtempSync(join(tmpdir(), 'letkite-edges-'));
  fixtures.push(apps);
  const put = (path: string, text: string) => {
    mkdirSync(dirname(join(apps, path)), { recursive: true });
    writeFileSync(join(apps, path), text);
  };
  put('agent/src/ops/a.ts', "import { x } from '../../../gateway/src/x';\nimport { p } from '@letkite/protocol';\n");
  put('gateway/src/b.ts', "export { y } from '@letkite/agent/src/y';\nimport { ok } from './ok';\n");
  put(
    'webapp/src/c.tsx',
    "const m = await import('../../gateway/src/m');\nimport { api } from '@letkite/protocol/api';\n",
  );
  expect(forbiddenEdges(apps).offending.sort()).toEqual([
    `agent${sep}src${sep}ops${sep}a.ts: ../../../gateway/src/x`,
    `gateway${sep}src${sep}b.ts: @letkite/agent/src/y`,
    `webapp${sep}src${sep}c.tsx: ../../gateway/src/m`,
  ]);
});
