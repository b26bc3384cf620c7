/**
 * Finds the line on which each key, array element and table of a TOML document starts, so schema errors (which
 * know only a key path) can name their line. It runs after smol-toml accepted the document, so it can assume
 * valid syntax; on anything it does not understand it stops and returns what it found (lines are a help for the
 * reader, never a decision).
 */
export type KeyPath = readonly (string | number)[];

export function keyPathId(path: KeyPath): string {
  return JSON.stringify(path);
}

export function tomlKeyLines(text: string): Map<string, number> {
  const found = new Map<string, number>();
  let i = 0;
  let line = 1;
  const tableArrays = new Map<string, number>();

  const record = (path: KeyPath) => {
    const id = keyPathId(path);
    if (!found.has(id)) found.set(id, line);
  };
  const advance = (n = 1) => {
    for (let k = 0; k < n && i < text.length; k++, i++) if (text[i] === '\n') line++;
  };
  const at = (s: string) => text.startsWith(s, i);
  const skipSpaces = () => {
    while (text[i] === ' ' || text[i] === '\t') advance();
  };
  const skipBlank = () => {
    for (;;) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') advance();
      else if (c === '#') while (i < text.length && text[i] !== '\n') advance();
      else return;
    }
  };
  const readQuoted = (quote: string, escapes: boolean): string => {
    const start = i;
    advance(quote.length);
    while (i < text.length && !at(quote)) advance(escapes && text[i] === '\\' ? 2 : 1);
    advance(quote.length);
    // A multi-line string may end with up to two extra quote characters that belong to its content.
    if (quote.length === 3) for (let extra = 0; extra < 2 && text[i] === quote[0]; extra++) advance();
    return text.slice(start, i);
  };
  const readKey = (): string[] => {
    const parts: string[] = [];
    for (;;) {
      skipSpaces();
      const c = text[i];
      if (c === '"') {
        const raw = readQuoted('"', true);
        try {
          parts.push(JSON.parse(raw) as string);
        } catch {
          parts.push(raw.slice(1, -1));
        }
      } else if (c === "'") parts.push(readQuoted("'", false).slice(1, -1));
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(text.slice(i, i + 1024));
        if (!m) throw new Error('unexpected key');
        parts.push(m[0]);
        advance(m[0].length);
      }
      skipSpaces();
      if (text[i] !== '.') return parts;
      advance();
    }
  };
  // `[[a]]` followed by `[a.b]` means the last element of `a`: insert the current index of every table array.
  const resolve = (parts: readonly string[]): (string | number)[] => {
    const out: (string | number)[] = [];
    for (const part of parts) {
      out.push(part);
      const count = tableArrays.get(keyPathId(out));
      if (count !== undefined) out.push(count - 1);
    }
    return out;
  };
  const readValue = (path: KeyPath): void => {
    skipSpaces();
    if (at('"""')) readQuoted('"""', true);
    else if (at("'''")) readQuoted("'''", false);
    else if (at('"')) readQuoted('"', true);
    else if (at("'")) readQuoted("'", false);
    else if (at('[')) {
      advance();
      for (let index = 0; ; index++) {
        skipBlank();
        if (at(']') || i >= text.length) break;
        record([...path, index]);
        readValue([...path, index]);
        skipBlank();
        if (at(',')) advance();
        else break;
      }
      skipBlank();
      advance();
    } else if (at('{')) {
      advance();
      for (;;) {
        skipBlank();
        if (at('}') || i >= text.length) break;
        const key = [...path, ...readKey()];
        record(key);
        if (!at('=')) throw new Error('expected =');
        advance();
        readValue(key);
        skipBlank();
        if (at(',')) advance();
        else break;
      }
      skipBlank();
      advance();
    } else {
      while (i < text.length && !',]}#\n\r'.includes(text[i] as string)) advance();
    }
  };

  try {
    let prefix: (string | number)[] = [];
    for (;;) {
      skipBlank();
      if (i >= text.length) break;
      const before = i;
      if (at('[[')) {
        advance(2);
        const parts = readKey();
        const parent = resolve(parts.slice(0, -1));
        const self = [...parent, parts[parts.length - 1] as string];
        const count = (tableArrays.get(keyPathId(self)) ?? 0) + 1;
        tableArrays.set(keyPathId(self), count);
        record(self);
        prefix = [...self, count - 1];
        record(prefix);
        advance(2);
      } else if (at('[')) {
        advance();
        prefix = resolve(readKey());
        record(prefix);
        advance();
      } else {
        const parts = readKey();
        for (let k = 1; k <= parts.length; k++) record([...prefix, ...parts.slice(0, k)]);
        if (!at('=')) throw new Error('expected =');
        advance();
        readValue([...prefix, ...parts]);
      }
      if (i === before) break;
    }
  } catch {
    // Best effort: keep the lines found so far.
  }
  return found;
}

/** The line of the deepest known ancestor-or-self of `path`, if any. */
export function lineOf(lines: ReadonlyMap<string, number>, path: KeyPath): number | undefined {
  for (let n = path.length; n > 0; n--) {
    const found = lines.get(keyPathId(path.slice(0, n)));
    if (found !== undefined) return found;
  }
  return undefined;
}
