import type { OptionContract } from './contracts';
import type { RulesetDefinition } from './ruleset-check';

function list(text: string | undefined, prefix: string): string[] {
  return (text ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((name) => `${prefix}${name.replace(/:\d+$/, '')}`);
}

/** One line saying which options keep an allow entry read-only (README tables are generated from this). */
export function describeContract(contract: OptionContract | undefined): string {
  if (!contract) return 'the words exactly as written';
  if (contract.anyArguments) return `any words: ${contract.anyArguments}`;
  const parts: string[] = [];
  if (contract.subcommand?.length) parts.push(`subcommand \`${contract.subcommand.join(' ')}\``);
  if (contract.global) {
    const global = describeContract({ ...contract.global, subcommand: undefined });
    if (global !== 'no options') parts.push(`before it: ${global}`);
  }
  const short = [...(contract.flags ?? '')].map((letter) => `-${letter}`);
  const valued = [...(contract.valued ?? '')].map((letter) => `-${letter} V`);
  const optional = [...(contract.optional ?? '')].map((letter) => `-${letter}[V]`);
  const dash = contract.singleDashLong ? '-' : '--';
  const long = [
    ...list(contract.long, dash),
    ...list(contract.longValued, dash).map((name) => `${name}=V`),
    ...list(contract.longOptional, dash).map((name) => `${name}[=V]`),
  ];
  const options = [...short, ...valued, ...optional, ...long];
  if (contract.check) parts.push('its own syntax check (see `src/rulesets.ts`)');
  else if (options.length > 0) parts.push(`options ${options.map((o) => `\`${o}\``).join(' ')}`);
  else parts.push('no options');
  if (contract.numbers) parts.push('`-N`');
  if (contract.values) {
    for (const [name, re] of Object.entries(contract.values))
      parts.push(`${name.length > 1 ? '--' : '-'}${name} must match \`${re.source}\``);
  }
  if (contract.requires)
    parts.push(`needs one of ${contract.requires.map((n) => `\`${n.length > 1 ? '--' : '-'}${n}\``).join(' ')}`);
  if (contract.needs) {
    for (const [name, partners] of Object.entries(contract.needs)) {
      parts.push(
        `\`${name.length > 1 ? '--' : '-'}${name}\` only with ${partners.map((p) => `\`${p.length > 1 ? '--' : '-'}${p}\``).join(' or ')}`,
      );
    }
  }
  if (contract.operandsNeed)
    parts.push(
      `operands only with ${contract.operandsNeed.map((n) => `\`${n.length > 1 ? '--' : '-'}${n}\``).join(' or ')}`,
    );
  if (contract.maxOperands !== undefined)
    parts.push(`at most ${contract.maxOperands} operand${contract.maxOperands === 1 ? '' : 's'}`);
  if (contract.operand) parts.push(`operands match \`${contract.operand.source}\``);
  if (contract.inner) parts.push('then the inner command (judged on its own)');
  if (contract.assignments) parts.push('`NAME=value` words');
  if (contract.everyOptionReadOnly)
    parts.push('audited: every option reads only, so unknown words may stand for options');
  return parts.join('; ');
}

/** The Markdown table of a rule set's allow entries and their read-only contracts. */
export function contractTable(definition: RulesetDefinition): string {
  const rows = definition.rules
    .filter((rule) => rule.verdict === 'allow')
    .map(
      (rule) =>
        `| \`${rule.match.replaceAll('|', '\\|')}\` | ${describeContract(rule.options).replaceAll('|', '\\|')} |`,
    );
  return ['| allow entry | keeps it read-only |', '|---|---|', ...rows].join('\n');
}
