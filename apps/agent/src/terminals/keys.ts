import { LetKiteError } from '@letkite/protocol';

/** Keys whose bytes do not depend on terminal modes. */
const FIXED: Record<string, string> = {
  enter: '\r',
  return: '\r',
  tab: '\t',
  'shift-tab': '\x1b[Z',
  btab: '\x1b[Z',
  escape: '\x1b',
  esc: '\x1b',
  backspace: '\x7f',
  bspace: '\x7f',
  space: ' ',
  delete: '\x1b[3~',
  dc: '\x1b[3~',
  insert: '\x1b[2~',
  ic: '\x1b[2~',
  pageup: '\x1b[5~',
  ppage: '\x1b[5~',
  pagedown: '\x1b[6~',
  npage: '\x1b[6~',
  f1: '\x1bOP',
  f2: '\x1bOQ',
  f3: '\x1bOR',
  f4: '\x1bOS',
  f5: '\x1b[15~',
  f6: '\x1b[17~',
  f7: '\x1b[18~',
  f8: '\x1b[19~',
  f9: '\x1b[20~',
  f10: '\x1b[21~',
  f11: '\x1b[23~',
  f12: '\x1b[24~',
};

/** Cursor keys: CSI in normal mode, SS3 when the program turned on application cursor keys (DECCKM, e.g. vi). */
const CURSOR: Record<string, string> = { up: 'A', down: 'B', right: 'C', left: 'D', home: 'H', end: 'F' };

/**
 * The bytes a named key sends, in the spirit of tmux's key names: `Enter`, `Tab`, `Escape`, `Up`, `F5`, `C-c`
 * (control), `M-b` (meta = ESC prefix), `C-M-x`. Case-insensitive except for the letter after `M-`. Unknown
 * names are `invalid_params`, never typed literally.
 */
export function keyBytes(name: string, modes: { applicationCursorKeys: boolean }): string {
  let rest = name;
  let ctrl = false;
  let meta = false;
  for (;;) {
    const prefix = rest.slice(0, 2).toLowerCase();
    if (rest.length > 2 && prefix === 'c-') {
      ctrl = true;
      rest = rest.slice(2);
    } else if (rest.length > 2 && prefix === 'm-') {
      meta = true;
      rest = rest.slice(2);
    } else break;
  }
  let bytes: string | undefined;
  const lower = rest.toLowerCase();
  if (rest.length === 1) {
    bytes = ctrl ? controlOf(rest) : rest;
  } else if (lower in CURSOR && !ctrl) {
    bytes = `${modes.applicationCursorKeys ? '\x1bO' : '\x1b['}${CURSOR[lower]}`;
  } else if (!ctrl) {
    bytes = FIXED[lower];
  }
  if (bytes === undefined) throw new LetKiteError('invalid_params', `unknown key "${name}"`);
  return meta ? `\x1b${bytes}` : bytes;
}

function controlOf(ch: string): string | undefined {
  const c = ch.toLowerCase();
  if (c >= 'a' && c <= 'z') return String.fromCharCode(c.charCodeAt(0) - 96);
  const special: Record<string, string> = {
    '@': '\0',
    ' ': '\0',
    '[': '\x1b',
    '\\': '\x1c',
    ']': '\x1d',
    '^': '\x1e',
    _: '\x1f',
    '?': '\x7f',
  };
  return special[c];
}
