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
  rules: CompiledRule[];
  allow: CompiledPattern[];
}

const policyCache = new WeakMap<CommandPolicy, CompiledPolicy>();
const ceilingCache = new WeakMap<CommandRule[], CompiledRule[]>();

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
  compiled = { rules, allow: (policy.allow ?? []).map(compilePattern) };
  policyCache.set(policy, compiled);
  return compiled;
}

export function compileCeilingRules(rules: CommandRule[]): CompiledRule[] {
  let compiled = ceilingCache.get(rules);
  if (!compiled) {
    compiled = rules.map((rule) => ({
      pattern: compilePattern(rule.match),
      verdict: rule.verdict,
      layer: 'ceiling',
      label: rule.match,
    }));
    ceilingCache.set(rules, compiled);
  }
  return compiled;
}
