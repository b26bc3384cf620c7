/**
 * Whether an awk program can run commands or write files: `system(…)`, a pipe (`print | "cmd"`, `"cmd" | getline`,
 * `|&`), an output redirection inside `print`/`printf` (`print > "f"`, `>>`), gawk's `@` (indirect calls, `@load`,
 * `@include`). A `>` that is a comparison (`$3 > 100`, `print (a > b)`) is not a redirect. Anything the scanner
 * cannot read (an unterminated string or regex) counts as "can", so a trick spelling fails closed.
 */
export function awkProgramRunsOrWrites(text: string): boolean {
  const n = text.length;
  let i = 0;
  /** Whether the previous token ends an operand (then `/` divides) or not (then `/` starts a regex). */
  let afterOperand = false;
  let depth = 0;
  /** The paren depth at which the current print statement started, or -1 outside print. */
  let printDepth = -1;
  const operatorWords = new Set([
    'print',
    'printf',
    'return',
    'in',
    'if',
    'while',
    'for',
    'do',
    'else',
    'getline',
    'delete',
    'exit',
    'next',
    'nextfile',
    'function',
    'func',
    'case',
    'switch',
  ]);
  while (i < n) {
    const c = text[i] as string;
    if (c === '\\' && text[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '"') {
      i++;
      while (i < n && text[i] !== '"') {
        if (text[i] === '\n') return true;
        if (text[i] === '\\') i++;
        i++;
      }
      if (i >= n) return true;
      i++;
      afterOperand = true;
      continue;
    }
    if (c === '/' && !afterOperand) {
      i++;
      let bracket = false;
      while (i < n && (text[i] !== '/' || bracket)) {
        const ch = text[i];
        if (ch === '\n') return true;
        if (ch === '\\') i++;
        else if (ch === '[') bracket = true;
        else if (ch === ']') bracket = false;
        i++;
      }
      if (i >= n) return true;
      i++;
      afterOperand = true;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const start = i;
      while (i < n && /[A-Za-z0-9_]/.test(text[i] as string)) i++;
      const word = text.slice(start, i);
      if (word === 'system') return true;
      if (word === 'print' || word === 'printf') printDepth = depth;
      afterOperand = !operatorWords.has(word);
      continue;
    }
    if (/[0-9.]/.test(c)) {
      while (i < n && /[0-9.eE]/.test(text[i] as string)) i++;
      afterOperand = true;
      continue;
    }
    i++;
    switch (c) {
      case '@':
        return true;
      case '|':
        if (text[i] === '|') {
          i++;
          afterOperand = false;
          continue;
        }
        return true;
      case '>': {
        if (text[i] === '=') {
          i++;
          afterOperand = false;
          continue;
        }
        if (printDepth >= 0 && depth === printDepth) {
          if (text[i] === '>') i++;
          const rest = text.slice(i).trimStart();
          if (/^"\/dev\/(stdout|stderr)"/.test(rest)) {
            afterOperand = false;
            continue;
          }
          return true;
        }
        afterOperand = false;
        continue;
      }
      case '(':
      case '[':
        if (c === '(') depth++;
        afterOperand = false;
        continue;
      case ')':
        depth--;
        afterOperand = true;
        continue;
      case ']':
        afterOperand = true;
        continue;
      case '$':
        afterOperand = false;
        continue;
      case ';':
      case '\n':
      case '{':
      case '}':
        printDepth = -1;
        afterOperand = false;
        continue;
      default:
        // `x++ / 2`: after ++/-- an operand ends
        if ((c === '+' || c === '-') && text[i] === c) {
          i++;
          continue;
        }
        afterOperand = false;
    }
  }
  return false;
}
