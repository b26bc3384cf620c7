import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { expect, test } from 'vitest';

// `@letkite/protocol/api` is bundled into the web app (REVIEW §2.3-6): everything it reaches must run in a
// browser. The walk follows every relative import from api/index.ts, however deep, so a helper in ../ that grows a
// Node dependency is caught too; the only package it may import is zod.
const allowedPackages = new Set(['zod']);

function importsOf(source: string): string[] {
  const specs: string[] = [];
  for (const m of source.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/g))
    specs.push(m[1] ?? '');
  for (const m of source.matchAll(/(?:^|[\s;])import\s*['"]([^'"]+)['"]/g)) specs.push(m[1] ?? '');
  for (const m of source.matchAll(/\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) specs.push(m[1] ?? '');
  return specs;
}

/** Every file reachable from `entry` through relative imports, and every problem found on the way. */
function walk(entry: string): { files: string[]; problems: string[] } {
  const seen = new Set<string>();
  const problems: string[] = [];
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() ?? '';
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
    // Buffer is a Node global: no import shows it, so look for the name itself.
    if (/\bBuffer\b/.test(code)) problems.push(`${file}: uses Buffer`);
    if (/\bprocess\./.test(code)) problems.push(`${file}: uses process`);
    for (const spec of importsOf(source)) {
      if (spec.startsWith('.')) {
        queue.push(resolve(dirname(file), spec.endsWith('.ts') ? spec : `${spec}.ts`));
      } else if (!allowedPackages.has(spec)) {
        problems.push(`${file}: imports ${spec}`);
      }
    }
  }
  return { files: [...seen], problems };
}

test('the api subpath and everything it imports is browser-safe: zod only, no node: module, no Buffer', () => {
  const { files, problems } = walk(join(import.meta.dirname, 'index.ts'));
  // The walk did reach the area files and the shared errors module outside api/.
  expect(files.length).toBeGreaterThan(8);
  expect(files.some((f) => f.endsWith('/src/errors.ts'))).toBe(true);
  expect(problems).toEqual([]);
});

test('the guard sees a node: import, a Buffer use and a package import, through a relative import', () => {
  const dir = join(import.meta.dirname, '__fixtures__');
  const { problems } = walk(join(dir, 'entry.ts'));
  expect(problems.map((p) => p.slice(dir.length + 1)).sort()).toEqual([
    'deep.ts: imports node:crypto',
    'deep.ts: uses Buffer',
    'entry.ts: imports @letkite/policy',
  ]);
});

test('the package exports the api subpath', () => {
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'));
  expect(pkg.exports['./api']).toBe('./src/api/index.ts');
});
