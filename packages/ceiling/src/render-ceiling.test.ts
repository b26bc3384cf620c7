import { describe, expect, test } from 'vitest';
import type { Ceiling } from './ceiling-schema';
import { CLOSED_CEILING, DEFAULT_CEILING } from './defaults';
import { parseCeilingToml } from './parse-ceiling';
import { Random, randomCeiling } from './random-inputs.testing';
import { renderCeilingToml, renderDefaultCeilingToml } from './render-ceiling';

describe('renderDefaultCeilingToml', () => {
  test('parses back to DEFAULT_CEILING', () => {
    expect(parseCeilingToml(renderDefaultCeilingToml())).toEqual(DEFAULT_CEILING);
  });

  test('spells out every key with a comment above it', () => {
    const text = renderDefaultCeilingToml();
    for (const key of Object.keys(DEFAULT_CEILING)) {
      expect(text).toMatch(new RegExp(`# [^\\n]*\\n${key} = `));
    }
  });
});

describe('renderCeilingToml', () => {
  test.each([
    ['the defaults', DEFAULT_CEILING],
    ['the closed ceiling', CLOSED_CEILING],
  ])('%s round-trip', (_, ceiling) => {
    expect(parseCeilingToml(renderCeilingToml(ceiling))).toEqual(ceiling);
  });

  test('strings needing escapes round-trip', () => {
    const ceiling: Ceiling = {
      ...DEFAULT_CEILING,
      gui_apps: ['Quote " and \\ back', 'ünïcødé 🪁'],
      rules: [{ match: 'echo "a\u007fb" \\ \t \n', verdict: 'deny' }],
    };
    expect(parseCeilingToml(renderCeilingToml(ceiling))).toEqual(ceiling);
  });

  test('generated ceilings round-trip', () => {
    const r = new Random(1234);
    for (let n = 0; n < 200; n++) {
      const ceiling = randomCeiling(r);
      expect(parseCeilingToml(renderCeilingToml(ceiling, { comments: r.bool() }))).toEqual(ceiling);
    }
  });
});
