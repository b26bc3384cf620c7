import type { Verdict } from './policy-schema';

/** How strict a verdict is: allow 0 < confirm 1 < approve 2 < deny 3. */
export function verdictStrictness(verdict: Verdict): number {
  switch (verdict) {
    case 'allow':
      return 0;
    case 'confirm':
      return 1;
    case 'approve':
      return 2;
    case 'deny':
      return 3;
  }
}

/** The strictest of the given verdicts; `allow` for none. */
export function strictestVerdict(...verdictList: Verdict[]): Verdict {
  let strictest: Verdict = 'allow';
  for (const verdict of verdictList) {
    if (verdictStrictness(verdict) > verdictStrictness(strictest)) strictest = verdict;
  }
  return strictest;
}
