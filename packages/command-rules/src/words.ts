import type { Node } from './shell-parser';
import type { Arg, Segment } from './types';

/** Most words one brace expansion may produce before the word is treated as unknown. */
const maxBraceWords = 256;

/**
 * The segments of a word node: quote removal and escapes done here, expansions kept as unknown parts. `posix`
 * reads it as dash does: `$'…'` and `$"…"` are a `$` followed by a quoted string.
 */
export function wordSegments(node: Node, posix = false): Segment[] {
  const out: Segment[] = [];
  appendSegments(node, out, posix);
  return out;
}

function appendSegments(node: Node, out: Segment[], posix = false): void {
  switch (node.type) {
    case 'word':
      appendUnquotedText(node.text, out);
      return;
    case 'number':
    case 'regex':
    case 'test_operator':
    case 'extglob_pattern':
    case 'variable_name':
    case 'brace_expression':
    case '==':
    case '=~':
    case '=':
      out.push({ lit: node.text, quoted: false });
      return;
    case 'raw_string':
      out.push({ lit: node.text.slice(1, -1), quoted: true });
      return;
    case 'ansi_c_string':
      out.push({ lit: posix ? `$${node.text.slice(2, -1)}` : decodeAnsiC(node.text.slice(2, -1)), quoted: true });
      return;
    case 'translated_string':
      if (posix) out.push({ lit: '$', quoted: true });
      appendDoubleQuoted(node, out);
      return;
    case 'string':
      appendDoubleQuoted(node, out);
      return;
    case 'concatenation':
      for (const child of node.children) if (child) appendSegments(child, out, posix);
      return;
    case 'simple_expansion':
    case 'expansion': {
      const name = expansionName(node);
      out.push(name === undefined ? { dyn: node.text, quoted: false } : { dyn: node.text, quoted: false, name });
      return;
    }
    default:
      // command/process substitution, arithmetic, arrays, `$`, errors: known only at run time
      out.push({ dyn: node.text, quoted: false });
  }
}

function appendDoubleQuoted(node: Node, out: Segment[]): void {
  for (const child of node.children) {
    if (!child) continue;
    if (child.type === 'string') {
      appendDoubleQuoted(child, out);
    } else if (child.type === 'string_content') {
      out.push({ lit: unescapeDoubleQuoted(child.text), quoted: true });
    } else if (child.type === '"' || child.type === '$"') {
      // delimiters
    } else if (child.isNamed) {
      const start = out.length;
      appendSegments(child, out);
      for (let i = start; i < out.length; i++) {
        const seg = out[i];
        if (seg) seg.quoted = true;
      }
    } else if (child.type !== '$') {
      out.push({ lit: child.text, quoted: true });
    } else {
      out.push({ dyn: '$', quoted: true });
    }
  }
}

function expansionName(node: Node): string | undefined {
  if (node.type === 'simple_expansion') {
    const child = node.namedChild(0);
    return child && (child.type === 'variable_name' || child.type === 'special_variable_name') ? child.text : undefined;
  }
  // ${NAME} exactly: `${`, variable_name, `}`
  if (node.childCount === 3) {
    const child = node.child(1);
    if (child?.type === 'variable_name') return child.text;
  }
  return undefined;
}

/** Backslash escapes in unquoted text: `\x` is a quoted x, backslash-newline disappears. */
function appendUnquotedText(text: string, out: Segment[]): void {
  if (!text.includes('\\')) {
    out.push({ lit: text, quoted: false });
    return;
  }
  let plain = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length) {
      const next = text[++i] as string;
      if (next === '\n') continue;
      if (plain) out.push({ lit: plain, quoted: false });
      plain = '';
      out.push({ lit: next, quoted: true });
    } else {
      plain += ch;
    }
  }
  if (plain) out.push({ lit: plain, quoted: false });
}

function unescapeDoubleQuoted(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\([$`"\\\n])/g, (_match, ch: string) => (ch === '\n' ? '' : ch));
}

const simpleEscapes: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** Decodes the body of a bash `$'…'` string; like bash, a NUL (`\0`, `\x00`, `\c@`, …) ends it. */
export function decodeAnsiC(body: string): string {
  const decoded = decodeAnsiCEscapes(body);
  const nul = decoded.indexOf('\0');
  return nul < 0 ? decoded : decoded.slice(0, nul);
}

function decodeAnsiCEscapes(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch !== '\\' || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const next = body[++i] as string;
    const simple = simpleEscapes[next];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const readDigits = (pattern: RegExp, max: number): string => {
      let digits = '';
      while (digits.length < max && i + 1 < body.length && pattern.test(body[i + 1] as string)) digits += body[++i];
      return digits;
    };
    if (next >= '0' && next <= '7') {
      i--;
      out += String.fromCharCode(Number.parseInt(readDigits(/[0-7]/, 3), 8) & 0xff);
    } else if (next === 'x') {
      const digits = readDigits(/[0-9a-fA-F]/, 2);
      out += digits ? String.fromCharCode(Number.parseInt(digits, 16)) : '\\x';
    } else if (next === 'u' || next === 'U') {
      const digits = readDigits(/[0-9a-fA-F]/, next === 'u' ? 4 : 8);
      const code = digits ? Number.parseInt(digits, 16) : Number.NaN;
      out += Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : `\\${next}${digits}`;
    } else if (next === 'c' && i + 1 < body.length) {
      out += String.fromCharCode((body.charCodeAt(++i) & 0x1f) >>> 0);
    } else {
      out += `\\${next}`;
    }
  }
  return out;
}

function hasGlobChar(text: string): boolean {
  if (text.includes('*') || text.includes('?')) return true;
  const open = text.indexOf('[');
  return open >= 0 && text.indexOf(']', open + 1) > open;
}

/** Builds an argument from its segments. */
export function argFromSegments(segments: Segment[]): Arg {
  let value = '';
  let display = '';
  let dynamic = false;
  let glob = false;
  let splittable = false;
  for (const seg of segments) {
    if ('lit' in seg) {
      value += seg.lit;
      display += seg.lit;
      if (!seg.quoted && hasGlobChar(seg.lit)) glob = true;
    } else {
      display += seg.dyn;
      dynamic = true;
      if (!seg.quoted) splittable = true;
    }
  }
  return { value, display, dynamic, splittable: splittable || glob, glob, segments };
}

/** An argument known exactly (an argv element, or a literal produced by unwrapping). */
export function literalArg(value: string): Arg {
  return {
    value,
    display: value,
    dynamic: false,
    splittable: false,
    glob: false,
    segments: [{ lit: value, quoted: true }],
  };
}

/** An argument known only at run time, such as the arguments `xargs` reads from its input. */
export function unknownArg(display: string, splittable: boolean): Arg {
  return {
    value: '',
    display,
    dynamic: true,
    splittable,
    glob: false,
    segments: [{ dyn: display, quoted: !splittable }],
  };
}

type Token = { ch: string } | { seg: Segment };

/** Brace expansion of one word (`{a,b}c`, `{1..3}`); undefined when it would produce too many words. */
export function expandBraces(segments: Segment[]): Segment[][] | undefined {
  if (!segments.some((seg) => 'lit' in seg && !seg.quoted && seg.lit.includes('{'))) return [segments];
  const tokens: Token[] = [];
  for (const seg of segments) {
    if ('lit' in seg && !seg.quoted) for (const ch of seg.lit) tokens.push({ ch });
    else tokens.push({ seg });
  }
  const expanded = expandTokens(tokens, 0);
  return expanded?.map(tokensToSegments);
}

function tokensToSegments(tokens: Token[]): Segment[] {
  const out: Segment[] = [];
  let plain = '';
  for (const token of tokens) {
    if ('ch' in token) plain += token.ch;
    else {
      if (plain) out.push({ lit: plain, quoted: false });
      plain = '';
      out.push(token.seg);
    }
  }
  if (plain) out.push({ lit: plain, quoted: false });
  return out;
}

function expandTokens(tokens: Token[], from: number): Token[][] | undefined {
  for (let open = from; open < tokens.length; open++) {
    const token = tokens[open];
    if (!token || !('ch' in token) || token.ch !== '{') continue;
    // as bash's brace_gobbler: a `}` at the opener's level closes it only after a comma there, or when what it
    // encloses is a sequence (`{a}` stays literal and the search goes on: `{a}x,y}` is `a}x y`)
    let depth = 0;
    const commas: number[] = [];
    let close = -1;
    for (let i = open + 1; i < tokens.length; i++) {
      const t = tokens[i];
      if (!t || !('ch' in t)) continue;
      if (t.ch === '{') depth++;
      else if (t.ch === '}') {
        if (depth > 0) depth--;
        else if (commas.length > 0 || sequenceAlternatives(tokens.slice(open + 1, i)) !== undefined) {
          close = i;
          break;
        }
      } else if (t.ch === ',' && depth === 0) commas.push(i);
    }
    if (close < 0) continue; // an unmatched `{` is a literal; a later one may still expand
    const prefix = tokens.slice(0, open);
    const suffix = tokens.slice(close + 1);
    let alternatives: Token[][] | undefined;
    if (commas.length > 0) {
      alternatives = [];
      let start = open + 1;
      for (const comma of [...commas, close]) {
        alternatives.push(tokens.slice(start, comma));
        start = comma + 1;
      }
    } else {
      const sequence = sequenceAlternatives(tokens.slice(open + 1, close));
      if (sequence === null) return undefined;
      alternatives = sequence;
    }
    if (!alternatives) continue;
    const results: Token[][] = [];
    for (const alternative of alternatives) {
      const combined = [...prefix, ...alternative, ...suffix];
      const expanded = expandTokens(combined, 0);
      if (!expanded) return undefined;
      results.push(...expanded);
      if (results.length > maxBraceWords) return undefined;
    }
    return results;
  }
  return [tokens];
}

/** `{1..5}`, `{a..e}`, `{10..1..2}`; undefined when not a sequence, null when too long. */
function sequenceAlternatives(inner: Token[]): Token[][] | undefined | null {
  if (!inner.every((t) => 'ch' in t)) return undefined;
  const text = inner.map((t) => ('ch' in t ? t.ch : '')).join('');
  const numeric = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(text);
  const letters = /^([a-zA-Z])\.\.([a-zA-Z])(?:\.\.(-?\d+))?$/.exec(text);
  const match = numeric ?? letters;
  if (!match) return undefined;
  const from = numeric ? Number(match[1]) : (match[1] as string).charCodeAt(0);
  const to = numeric ? Number(match[2]) : (match[2] as string).charCodeAt(0);
  const step = Math.abs(Number(match[3] ?? 1)) || 1;
  if (Math.abs(to - from) / step > maxBraceWords) return null;
  const out: Token[][] = [];
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) {
    const word = numeric ? String(v) : String.fromCharCode(v);
    out.push([...word].map((ch) => ({ ch })));
  }
  return out;
}
