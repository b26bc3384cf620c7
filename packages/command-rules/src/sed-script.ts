/**
 * Whether a sed script can run commands or write files: the GNU `e` command, the `s///e` and `s///w` flags, and
 * `w`/`W`. Anything the scanner does not understand counts as "can", so a trick spelling fails closed.
 */
export function sedScriptRunsCommands(script: string): boolean {
  let i = 0;
  const n = script.length;
  const at = () => script[i] ?? '';
  const skipBlanks = () => {
    while (i < n && /[ \t]/.test(at())) i++;
  };
  const skipToLineEnd = () => {
    while (i < n && at() !== '\n') {
      if (at() === '\\') i++;
      i++;
    }
  };
  /** Skips a delimited part (regex or replacement); false when it never ends. */
  const skipDelimited = (delimiter: string): boolean => {
    while (i < n && at() !== delimiter) {
      if (at() === '\\') i++;
      if (at() === '\n' && delimiter !== '\n') return false;
      i++;
    }
    if (i >= n) return false;
    i++;
    return true;
  };
  const skipAddress = (): boolean => {
    const c = at();
    if (/\d/.test(c)) {
      while (/[\d~]/.test(at())) i++;
    } else if (c === '$') {
      i++;
    } else if (c === '/' || c === '\\') {
      const delimiter = c === '\\' ? script[++i] : '/';
      i++;
      if (!delimiter || !skipDelimited(delimiter)) return false;
      while (/[IM]/.test(at())) i++;
    } else if ((c === '+' || c === '~') && /\d/.test(script[i + 1] ?? '')) {
      i++;
      while (/\d/.test(at())) i++;
    }
    return true;
  };
  while (i < n) {
    while (i < n && /[\s;]/.test(at())) i++;
    if (i >= n) break;
    if (!skipAddress()) return true;
    skipBlanks();
    if (at() === ',') {
      i++;
      skipBlanks();
      if (!skipAddress()) return true;
      skipBlanks();
    }
    while (at() === '!') {
      i++;
      skipBlanks();
    }
    const command = at();
    i++;
    switch (command) {
      case '{':
      case '}':
        break;
      case '#':
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'a':
      case 'i':
      case 'c':
      case 'r':
      case 'R':
        if ('bTt'.includes(command)) {
          while (i < n && !/[;\n}]/.test(at())) i++;
        } else skipToLineEnd();
        break;
      case 'e':
      case 'w':
      case 'W':
        return true;
      case 's': {
        const delimiter = at();
        i++;
        if (!delimiter || delimiter === '\n' || delimiter === '\\') return true;
        if (!skipDelimited(delimiter) || !skipDelimited(delimiter)) return true;
        while (i < n && !/[;\n}]/.test(at())) {
          if (at() === 'e' || at() === 'w' || at() === 'W') return true;
          i++;
        }
        break;
      }
      case 'y': {
        const delimiter = at();
        i++;
        if (!delimiter || !skipDelimited(delimiter) || !skipDelimited(delimiter)) return true;
        break;
      }
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
        skipBlanks();
        while (/\d/.test(at())) i++;
        break;
      default:
        if (!'dDgGhHnNpPxz=Fv'.includes(command) || command === '') return true;
    }
  }
  return false;
}
