import { checkContract, type OptionContract, probeOption } from './contracts';
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
  /**
   * Allow rules: the read-only contract (src/contracts.ts). Required for every allow rule whose pattern has a
   * wildcard; a command it refuses is not allowed by this rule.
   */
  options?: OptionContract;
  /** Commands the pattern matches but the contract must refuse (checked at load, like the examples). */
  refuses?: string[];
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

/** An allow rule with a wildcard must say which options keep it read-only. */
function checkContractPresence(ruleset: string, rule: RulesetRule, pattern: CompiledPattern): void {
  if (rule.verdict !== 'allow') {
    if (rule.options) throw new RulesetError(ruleset, rule.match, 'only allow rules have a read-only contract');
    return;
  }
  const open = pattern.words.some((word) => word.kind !== 'literal') || pattern.program.glob;
  if (open && !rule.options) {
    throw new RulesetError(ruleset, rule.match, 'an allow rule with a wildcard needs its read-only contract (options)');
  }
}

/**
 * A letter or name listed both without and with a value would let the table read the value as a word of its own
 * (`yq -o -- -i` read as `--` ending the options): a load error.
 */
function checkContractShape(ruleset: string, match: string, contract: OptionContract): void {
  const letters = (text: string | undefined) => [...(text ?? '')];
  const names = (text: string | undefined) =>
    (text ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((name) => name.replace(/:\d+$/, ''));
  const twice = (groups: string[][]) => {
    const seen = new Set<string>();
    for (const group of groups)
      for (const item of new Set(group))
        if (seen.has(item)) return item;
        else seen.add(item);
    return undefined;
  };
  const letter = twice([letters(contract.flags), letters(contract.valued), letters(contract.optional)]);
  const name = twice([names(contract.long), names(contract.longValued), names(contract.longOptional)]);
  if (letter || name) {
    throw new RulesetError(
      ruleset,
      match,
      `the contract lists ${letter ? `-${letter}` : `--${name}`} both with and without a value`,
    );
  }
  if (contract.global) checkContractShape(ruleset, match, contract.global);
}

/** The contract refuses an option nobody has, and every `refuses` example, which the bare pattern matches. */
function checkContractRefusals(ruleset: string, rule: RulesetRule, pattern: CompiledPattern): void {
  const bare: CompiledPattern = { ...pattern, contract: undefined };
  const ctx = { needsProof: true, trustedDirs };
  const prefix = pattern.words.filter((word) => word.kind === 'literal').map((word) => (word as { text: string }).text);
  const probes = rule.options?.anyArguments ? [] : [[pattern.program.text, ...prefix, probeOption].join(' ')];
  for (const example of [...probes, ...(rule.refuses ?? [])]) {
    const args = exampleArgs(example);
    if (matchPattern(bare, args, ctx) !== certainMatch) {
      throw new RulesetError(
        ruleset,
        rule.match,
        `refused example ${JSON.stringify(example)} does not match the pattern`,
      );
    }
    if (matchPattern(pattern, args, ctx) !== noMatch) {
      throw new RulesetError(ruleset, rule.match, `the contract does not refuse ${JSON.stringify(example)}`);
    }
  }
}

/** Compiles a rule set and checks every example against it; throws RulesetError on the first that fails. */
export function compileRuleset(definition: RulesetDefinition): CompiledRuleset {
  const rules: CompiledRulesetRule[] = definition.rules.map((rule) => {
    let pattern: CompiledPattern;
    try {
      pattern = compilePattern(rule.match);
    } catch (error) {
      throw new RulesetError(definition.name, rule.match, (error as Error).message);
    }
    checkContractPresence(definition.name, rule, pattern);
    if (rule.options) checkContractShape(definition.name, rule.match, rule.options);
    const contract = rule.options;
    if (contract) {
      // options start after the pattern's leading literal words (`openssl version *`), unless the contract
      // finds its subcommand itself (`git ** log *`, with global options before it)
      const leading = pattern.words.findIndex((word) => word.kind !== 'literal');
      const start = contract.subcommand ? 1 : 1 + (leading < 0 ? pattern.words.length : leading);
      pattern = { ...pattern, contract: (args) => checkContract(contract, args, start) };
      checkContractRefusals(definition.name, rule, pattern);
    }
    return { ...rule, pattern };
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
