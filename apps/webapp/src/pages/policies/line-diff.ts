/** One line of a diff between two texts. */
export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
  /** 1-based line in the old text (removed, same) and in the new text (added, same). */
  oldLine?: number;
  newLine?: number;
}

/**
 * A line diff by longest common subsequence: what a person reviewing a policy change needs (policies are a few
 * hundred lines at most, so the quadratic table is small). Removed lines come before the added ones that replace
 * them.
 */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i]!, oldLine: i + 1, newLine: j + 1 });
      i++;
      j++;
    } else if (j >= m || (i < n && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push({ kind: 'removed', text: a[i]!, oldLine: i + 1 });
      i++;
    } else {
      out.push({ kind: 'added', text: b[j]!, newLine: j + 1 });
      j++;
    }
  }
  return out;
}
