import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const here = import.meta.dirname;
// Subfolders included, so a new folder is guarded too (REVIEW-architecture §7-5).
const sources = (readdirSync(here, { recursive: true }) as string[]).filter(
  (file) => file.endsWith('.ts') && !file.endsWith('.test.ts'),
);

describe('architecture guards', () => {
  test('only the grammar loader imports a node: module', () => {
    const offenders = sources.filter(
      (file) =>
        file !== 'grammar-loader.ts' &&
        /from ['"]node:|import\(['"]node:|require\(['"]node:/.test(readFileSync(join(here, file), 'utf8')),
    );
    expect(offenders).toEqual([]);
    expect(readFileSync(join(here, 'grammar-loader.ts'), 'utf8')).toMatch(/from 'node:/);
  });

  test('nothing imports from apps/ or reads the environment or the clock', () => {
    for (const file of sources) {
      const text = readFileSync(join(here, file), 'utf8');
      expect(text, file).not.toMatch(/from ['"][./]*apps\/|@letkite\/(gateway|agent|cli)/);
      expect(text, file).not.toMatch(/process\.env|Date\.now|performance\.now|new Date\(/);
    }
  });
});
