import { defaultTrustedDirs } from './paths';
import {
  type CompiledPattern,
  certainMatch,
  compilePattern,
  matchPattern,
  noMatch,
  splitPatternWords,
} from './pattern';
import type { RulesetName, Verdict } from './policy-schema';
import { literalArg } from './words';

/** A rule of a built-in rule set, documented by examples that must and must not match it. */
export interface RulesetRule {
  match: string;
  verdict: Verdict;
  /** Why the rule is there. */
  why: string;
  /** Commands this rule must decide (it must be the first rule of the set to match them). */
  matches: string[];
  /** Commands this rule must not match. */
  notMatches: string[];
}

export interface RulesetDefinition {
  name: RulesetName | string;
  description: string;
  rules: RulesetRule[];
}

export interface CompiledRulesetRule extends RulesetRule {
  pattern: CompiledPattern;
}

export interface CompiledRuleset {
  name: string;
  description: string;
  rules: CompiledRulesetRule[];
}

/** A rule set whose examples do not hold: a load error, so a wrong rule never ships silently. */
export class RulesetError extends Error {
  constructor(
    readonly ruleset: string,
    readonly rule: string,
    message: string,
  ) {
    super(`rule set ${ruleset}, rule ${JSON.stringify(rule)}: ${message}`);
    this.name = 'RulesetError';
  }
}

const trustedDirs = new Set(defaultTrustedDirs);

function exampleArgs(example: string) {
  return splitPatternWords(example).map((word) => literalArg(word.text));
}

/** Compiles a rule set and checks every example against it; throws RulesetError on the first that fails. */
export function compileRuleset(definition: RulesetDefinition): CompiledRuleset {
  const rules: CompiledRulesetRule[] = definition.rules.map((rule) => {
    try {
      return { ...rule, pattern: compilePattern(rule.match) };
    } catch (error) {
      throw new RulesetError(definition.name, rule.match, (error as Error).message);
    }
  });
  rules.forEach((rule, index) => {
    if (rule.matches.length === 0 || rule.notMatches.length === 0) {
      throw new RulesetError(
        definition.name,
        rule.match,
        'needs at least one example that matches and one that does not',
      );
    }
    const ctx = { needsProof: rule.verdict === 'allow', trustedDirs };
    for (const example of rule.matches) {
      const args = exampleArgs(example);
      if (matchPattern(rule.pattern, args, ctx) !== certainMatch) {
        throw new RulesetError(definition.name, rule.match, `example ${JSON.stringify(example)} does not match`);
      }
      const earlier = rules
        .slice(0, index)
        .find(
          (other) =>
            matchPattern(other.pattern, args, { needsProof: other.verdict === 'allow', trustedDirs }) === certainMatch,
        );
      if (earlier) {
        throw new RulesetError(
          definition.name,
          rule.match,
          `example ${JSON.stringify(example)} is decided by the earlier rule ${JSON.stringify(earlier.match)}`,
        );
      }
    }
    for (const example of rule.notMatches) {
      if (matchPattern(rule.pattern, exampleArgs(example), ctx) !== noMatch) {
        throw new RulesetError(definition.name, rule.match, `example ${JSON.stringify(example)} matches but must not`);
      }
    }
  });
  return { name: definition.name, description: definition.description, rules };
}
