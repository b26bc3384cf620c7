import { LetKiteError } from '@letkite/protocol';

/** Modifier names in a combination ("ctrl+shift+t") and the keysym of the key each presses. */
const modifiers: Record<string, number> = {
  shift: 0xffe1,
  ctrl: 0xffe3,
  control: 0xffe3,
  alt: 0xffe9,
  meta: 0xffe7,
  super: 0xffeb,
  win: 0xffeb,
};

/** Named keys (X keysym names, plus a few common spellings), case-insensitive. */
const named: Record<string, number> = {
  return: 0xff0d,
  enter: 0xff0d,
  kp_enter: 0xff8d,
  tab: 0xff09,
  escape: 0xff1b,
  esc: 0xff1b,
  backspace: 0xff08,
  delete: 0xffff,
  del: 0xffff,
  insert: 0xff63,
  home: 0xff50,
  end: 0xff57,
  left: 0xff51,
  up: 0xff52,
  right: 0xff53,
  down: 0xff54,
  page_up: 0xff55,
  prior: 0xff55,
  pageup: 0xff55,
  page_down: 0xff56,
  next: 0xff56,
  pagedown: 0xff56,
  space: 0x20,
  menu: 0xff67,
  print: 0xff61,
  ...modifiers,
  shift_l: 0xffe1,
  shift_r: 0xffe2,
  control_l: 0xffe3,
  control_r: 0xffe4,
  alt_l: 0xffe9,
  alt_r: 0xffea,
  super_l: 0xffeb,
  super_r: 0xffec,
};
for (let i = 1; i <= 24; i++) named[`f${i}`] = 0xffbe + i - 1;

/** The keysym X uses for a character: Latin-1 as itself, the rest as 0x01000000 + code point. */
export function keysymOfChar(ch: string): number {
  if (ch === '\n' || ch === '\r') return 0xff0d;
  if (ch === '\t') return 0xff09;
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) {
    throw new LetKiteError(
      'invalid_params',
      `cannot type the control character U+${code.toString(16).padStart(4, '0')}`,
    );
  }
  return code <= 0xff ? code : 0x01000000 + code;
}

/** One combination such as "ctrl+shift+t": the modifier keysyms held, then the key pressed. */
export interface KeyCombo {
  modifiers: number[];
  key: number;
}

function keysymOfName(name: string): number {
  const sym = named[name.toLowerCase()];
  if (sym !== undefined) return sym;
  if ([...name].length === 1) return keysymOfChar(name);
  throw new LetKiteError('invalid_params', `unknown key "${name}"`, { key: name });
}

/** Parses "ctrl+a BackSpace Return" into combinations; an unknown key name is `invalid_params`. */
export function parseKeys(keys: string): KeyCombo[] {
  return keys
    .trim()
    .split(/\s+/)
    .map((combo) => {
      // "+" alone (or at the end, "ctrl++") is the plus key.
      const parts =
        combo === '+' ? ['+'] : combo.endsWith('++') ? [...combo.slice(0, -2).split('+'), '+'] : combo.split('+');
      const last = parts.pop() ?? '';
      const mods = parts.map((p) => {
        const m = modifiers[p.toLowerCase()];
        if (m === undefined) throw new LetKiteError('invalid_params', `unknown modifier "${p}" in "${combo}"`);
        return m;
      });
      return { modifiers: mods, key: keysymOfName(last) };
    });
}
