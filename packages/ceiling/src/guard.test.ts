import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';

// This package is pure (CONVENTIONS §2, §10): no node: modules and nothing from apps/. Of the workspace it uses
// only these, so the dependency direction stays ceiling → policy → command-rules.
// command-rules: judgeCommand evaluates a clamped policy's commands the same way on gateway and agent.
const allowedWorkspacePackages = ['@letkite/protocol', '@letkite/policy', '@letkite/command-rules'];

test('src imports no node: module, nothing from apps/ and only the allowed workspace packages', () => {
  const dir = import.meta.dirname;
  const offending: string[] = [];
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const source = readFileSync(join(dir, file), 'utf8');
    for (const m of source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1] ?? '';
      const workspace = spec.startsWith('@letkite/') && !allowedWorkspacePackages.includes(spec);
      if (spec.startsWith('node:') || /(^|\/)apps\//.test(spec) || workspace) {
        offending.push(`${file}: ${spec}`);
      }
    }
  }
  expect(readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).length).toBeGreaterThan(5);
  expect(offending).toEqual([]);
});
