import { describe, expect, test } from 'vitest';
import { rulesetNames } from './policy-schema';
import { compileRuleset, RulesetError } from './ruleset-check';
import { loadRuleset, rulesetDefinitions } from './rulesets';

describe('built-in rule sets', () => {
  test.each(rulesetNames)('%s loads with every example holding', (name) => {
    const ruleset = loadRuleset(name);
    expect(ruleset.rules.length).toBeGreaterThan(5);
    expect(rulesetDefinitions[name].description).not.toBe('');
    for (const rule of ruleset.rules) {
      expect(rule.why).not.toBe('');
      expect(rule.matches.length).toBeGreaterThan(0);
      expect(rule.notMatches.length).toBeGreaterThan(0);
    }
  });

  test('an example that does not match its rule is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [
        {
          match: 'ls *',
          verdict: 'allow' as const,
          why: 'x',
          matches: ['cat x'],
          notMatches: ['rm x'],
          options: { flags: 'l' },
        },
      ],
    };
    expect(() => compileRuleset(broken)).toThrow(RulesetError);
    expect(() => compileRuleset(broken)).toThrow(/does not match/);
  });

  test('an example that a rule must not match is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [
        {
          match: 'ls *',
          verdict: 'allow' as const,
          why: 'x',
          matches: ['ls'],
          notMatches: ['ls -la'],
          options: { flags: 'la' },
        },
      ],
    };
    expect(() => compileRuleset(broken)).toThrow(/matches but must not/);
  });

  test('an example decided by an earlier rule is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [
        {
          match: 'git *',
          verdict: 'allow' as const,
          why: 'x',
          matches: ['git log'],
          notMatches: ['ls'],
          options: { anyArguments: 'x' },
        },
        { match: 'git push *', verdict: 'deny' as const, why: 'x', matches: ['git push'], notMatches: ['git pull'] },
      ],
    };
    expect(() => compileRuleset(broken)).toThrow(/decided by the earlier rule/);
  });

  test('a rule without examples is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [
        {
          match: 'ls *',
          verdict: 'allow' as const,
          why: 'x',
          matches: [],
          notMatches: ['rm'],
          options: { flags: 'l' },
        },
      ],
    };
    expect(() => compileRuleset(broken)).toThrow(RulesetError);
  });

  test('a rule whose pattern does not compile is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [{ match: "ls 'x", verdict: 'allow' as const, why: 'x', matches: ['ls'], notMatches: ['rm'] }],
    };
    expect(() => compileRuleset(broken)).toThrow(/unclosed single quote/);
  });

  test('an allow rule with a wildcard and no read-only contract is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [{ match: 'sort *', verdict: 'allow' as const, why: 'x', matches: ['sort f'], notMatches: ['rm'] }],
    };
    expect(() => compileRuleset(broken)).toThrow(/needs its read-only contract/);
  });

  test('a contract that lets an unknown option through is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [
        {
          match: 'sort *',
          verdict: 'allow' as const,
          why: 'x',
          matches: ['sort f'],
          notMatches: ['rm'],
          options: { everyOptionReadOnly: true, check: () => undefined },
        },
      ],
    };
    expect(() => compileRuleset(broken)).toThrow(/does not refuse "sort --letkite-unknown-option"/);
  });

  test('a contract that does not refuse its refused examples is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [
        {
          match: 'sort *',
          verdict: 'allow' as const,
          why: 'x',
          matches: ['sort f'],
          notMatches: ['rm'],
          options: { flags: 'uo' },
          refuses: ['sort -o out f'],
        },
      ],
    };
    expect(() => compileRuleset(broken)).toThrow(/does not refuse "sort -o out f"/);
  });

  test.each(rulesetNames)('every allow entry of %s with a wildcard has a read-only contract', (name) => {
    for (const rule of rulesetDefinitions[name].rules) {
      if (rule.verdict !== 'allow') continue;
      const open = /(^|\s)\*\*?(\s|$)|[?[]/.test(rule.match) || rule.match.includes('*');
      if (open) expect(rule.options, rule.match).toBeDefined();
    }
  });
});
