import { evidenceName } from './paths';
import { type CompiledPattern, compilePattern } from './pattern';
import type { CommandPolicy, CommandRule, Verdict } from './policy-schema';
import { loadRuleset } from './rulesets';

/** A rule ready to match, with the name it is reported under. */
export interface CompiledRule {
  pattern: CompiledPattern;
  verdict: Verdict;
  layer: 'rule' | 'ruleset' | 'ceiling';
  /** The pattern as written; for rule sets prefixed with the set's name. */
  label: string;
}

export interface CompiledPolicy {
  /** The policy's own rules, then its rule sets in order: first match wins. */
  rules: RuleIndex;
  allow: CompiledPattern[];
}

/**
 * Rules grouped by the program they name, so a command is matched only against rules that could apply to it.
 * Keys are lower-case basenames without `.exe` (the loosest way a program can match); rules whose program is a
 * glob apply to every command. Each group keeps the rules' order.
 */
export interface RuleIndex {
  all: CompiledRule[];
  byProgram: Map<string, CompiledRule[]>;
  globbed: CompiledRule[];
}

export function indexRules(rules: CompiledRule[]): RuleIndex {
  const byProgram = new Map<string, CompiledRule[]>();
  const globbed: CompiledRule[] = [];
  for (const rule of rules) {
    if (rule.pattern.program.glob) {
      globbed.push(rule);
      for (const list of byProgram.values()) list.push(rule);
      continue;
    }
    const key = evidenceName(rule.pattern.program.text);
    let list = byProgram.get(key);
    if (!list) {
      list = [...globbed];
      byProgram.set(key, list);
    }
    list.push(rule);
  }
  return { all: rules, byProgram, globbed };
}

/** The rules that could match a command whose program has this evidence name, in order. */
export function candidateRules(index: RuleIndex, name: string | undefined): CompiledRule[] {
  if (name === undefined) return index.all;
  return index.byProgram.get(name) ?? index.globbed;
}

const policyCache = new WeakMap<CommandPolicy, CompiledPolicy>();
const ceilingCache = new WeakMap<CommandRule[], RuleIndex>();

/** Compiles a policy's patterns (cached per policy object); throws PatternError or RulesetError. */
export function compilePolicy(policy: CommandPolicy): CompiledPolicy {
  let compiled = policyCache.get(policy);
  if (compiled) return compiled;
  const rules: CompiledRule[] = (policy.rules ?? []).map((rule) => ({
    pattern: compilePattern(rule.match),
    verdict: rule.verdict,
    layer: 'rule',
    label: rule.match,
  }));
  for (const name of policy.rulesets ?? []) {
    for (const rule of loadRuleset(name).rules) {
      rules.push({ pattern: rule.pattern, verdict: rule.verdict, layer: 'ruleset', label: `${name}: ${rule.match}` });
    }
  }
  compiled = { rules: indexRules(rules), allow: (policy.allow ?? []).map(compilePattern) };
  policyCache.set(policy, compiled);
  return compiled;
}

export function compileCeilingRules(rules: CommandRule[]): RuleIndex {
  let compiled = ceilingCache.get(rules);
  if (!compiled) {
    compiled = indexRules(
      rules.map((rule) => ({
        pattern: compilePattern(rule.match),
        verdict: rule.verdict,
        layer: 'ceiling',
        label: rule.match,
      })),
    );
    ceilingCache.set(rules, compiled);
  }
  return compiled;
}
