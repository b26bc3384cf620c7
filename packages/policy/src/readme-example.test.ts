import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { parsePolicyToml } from './parse-policy';

/** The TOML blocks marked `<!-- policy-example -->` in a README. */
function examples(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/<!-- policy-example -->\s*```toml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

test.each([
  ['packages/policy/README.md', join(import.meta.dirname, '../README.md')],
  ['README.md', join(import.meta.dirname, '../../../README.md')],
])('the complete policy example in %s parses, every key set', (_name, file) => {
  const found = examples(file);
  expect(found).toHaveLength(1);
  const policy = parsePolicyToml(found[0] ?? '');
  expect(policy.name).toBe('ops');
  expect(policy.commands.rules.length).toBeGreaterThan(3);
  expect(policy.approval.tools).toContain('write_file');
  expect(policy.tunnel_targets.length).toBeGreaterThan(0);
});
