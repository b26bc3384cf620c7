import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';

// The web app is bundled for the browser: of the workspace it may import only the browser-safe contracts
// (`@letkite/protocol/api`, REVIEW §5), never a package index that reaches Node modules, nor anything in apps/.
test('the web app imports nothing from the workspace but @letkite/protocol/api', () => {
  const root = import.meta.dirname;
  const offending: string[] = [];
  let files = 0;
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.tsx?$/.test(entry.name) || entry.name.endsWith('.test.ts')) continue;
    files++;
    const path = join(entry.parentPath, entry.name);
    for (const m of readFileSync(path, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1] ?? '';
      if ((spec.startsWith('@letkite/') && spec !== '@letkite/protocol/api') || /(^|\/)apps\//.test(spec)) {
        offending.push(`${relative(root, path)}: ${spec}`);
      }
    }
  }
  expect(files).toBeGreaterThan(15);
  expect(offending).toEqual([]);
});
