import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { contractTable } from './contract-docs';
import { rulesetDefinitions } from './rulesets';

describe('the README documents the read-only contract of every allow entry', () => {
  const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
  test.each(['linux-readonly', 'windows-readonly', 'deploy'] as const)('%s', (name) => {
    const start = `<!-- contracts:${name} -->\n`;
    const end = `\n<!-- /contracts:${name} -->`;
    const from = readme.indexOf(start);
    const to = readme.indexOf(end);
    expect(from, `README has the ${name} table`).toBeGreaterThan(0);
    expect(readme.slice(from + start.length, to)).toBe(contractTable(rulesetDefinitions[name]));
  });

  test('no-destructive has no allow entries to document', () => {
    expect(rulesetDefinitions['no-destructive'].rules.some((rule) => rule.verdict === 'allow')).toBe(false);
  });
});
