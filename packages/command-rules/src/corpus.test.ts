import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { evaluateCommand } from './evaluate';
import { CommandPolicy, type Verdict, verdicts } from './policy-schema';
import { loadCommandRules } from './shell-parser';
import { verdictStrictness } from './verdict';

/**
 * Scores the rules against two corpora (src/corpus/): everyday read-only commands that must be `allow` (at most 2 %
 * over-blocked) and red-team commands with the verdict floor each must reach (no unsafe verdict at all). The
 * figures are printed so a run shows where the rules stand.
 */

const here = join(import.meta.dirname, 'corpus');

function lines(file: string): string[] {
  return readFileSync(join(here, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
}

const decode = (command: string) => command.replaceAll('⏎', '\n');

const harmless = lines('harmless.txt').map(decode);

interface RedTeam {
  scope: 'all' | 'readonly';
  floor: Verdict;
  kind: string;
  command: string;
}

const redTeam: RedTeam[] = lines('red-team.tsv').map((line) => {
  const [scope, floor, kind, ...rest] = line.split('\t');
  if ((scope !== 'all' && scope !== 'readonly') || !verdicts.includes(floor as Verdict) || !kind || rest.length === 0) {
    throw new Error(`bad red-team line: ${line}`);
  }
  return { scope, floor: floor as Verdict, kind, command: decode(rest.join('\t')) };
});

const policies = {
  'linux-readonly': CommandPolicy.parse({ rulesets: ['linux-readonly'] }),
  'no-destructive (default allow)': CommandPolicy.parse({ rulesets: ['no-destructive'], default: 'allow' }),
  'open (default allow)': CommandPolicy.parse({ default: 'allow' }),
};

const maxOverBlocked = 0.02;

beforeAll(async () => {
  await loadCommandRules();
});

describe('the corpora are large enough and well formed', () => {
  test('at least 600 harmless lines and 400 red-team lines', () => {
    expect(harmless.length).toBeGreaterThanOrEqual(600);
    expect(redTeam.length).toBeGreaterThanOrEqual(400);
    expect(new Set(harmless).size).toBeGreaterThan(harmless.length * 0.97);
  });

  test('every class of the issue has red-team lines', () => {
    const kinds = new Set(redTeam.map((entry) => entry.kind));
    for (const kind of ['option', 'loader', 'wrapper', 'wipe', 'spawn', 'unattended', 'language']) {
      expect(kinds.has(kind), kind).toBe(true);
    }
  });
});

describe('harmless commands are not over-blocked', () => {
  test.each(['linux-readonly', 'no-destructive (default allow)'] as const)(
    '%s: at most 2 percent not allowed',
    (name) => {
      const blocked = harmless.filter((command) => evaluateCommand(command, policies[name]).verdict !== 'allow');
      const rate = blocked.length / harmless.length;
      console.log(
        `harmless corpus under ${name}: ${harmless.length} commands, ${blocked.length} over-blocked ` +
          `(${(rate * 100).toFixed(2)} %)${blocked.length ? `:\n  ${blocked.join('\n  ')}` : ''}`,
      );
      expect(rate).toBeLessThanOrEqual(maxOverBlocked);
    },
  );
});

describe('red-team commands reach their floor: zero unsafe verdicts', () => {
  test.each(Object.keys(policies) as Array<keyof typeof policies>)('%s', (name) => {
    const entries = redTeam.filter((entry) => entry.scope === 'all' || name === 'linux-readonly');
    const unsafe: string[] = [];
    for (const entry of entries) {
      const { verdict, reasons } = evaluateCommand(entry.command, policies[name]);
      if (verdictStrictness(verdict) < verdictStrictness(entry.floor)) {
        unsafe.push(
          `${entry.kind}: ${JSON.stringify(entry.command)} got ${verdict}, needs ${entry.floor} ` +
            `(${reasons.map((reason) => `${reason.layer}: ${reason.message}`).join('; ')})`,
        );
      }
    }
    console.log(`red-team corpus under ${name}: ${entries.length} commands, ${unsafe.length} unsafe verdicts`);
    expect(unsafe).toEqual([]);
  });
});
