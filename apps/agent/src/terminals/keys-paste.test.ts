import { describe, expect, test } from 'vitest';
import { keyBytes } from './keys';
import { encodeText, PASTE_END, PASTE_START, stripPasteMarkers } from './paste';

describe('key names', () => {
  const normal = { applicationCursorKeys: false };
  test.each([
    ['Enter', '\r'],
    ['enter', '\r'],
    ['Tab', '\t'],
    ['Escape', '\x1b'],
    ['C-c', '\x03'],
    ['C-d', '\x04'],
    ['c-Z', '\x1a'],
    ['C-[', '\x1b'],
    ['M-b', '\x1bb'],
    ['M-B', '\x1bB'],
    ['C-M-x', '\x1b\x18'],
    ['Up', '\x1b[A'],
    ['Left', '\x1b[D'],
    ['F5', '\x1b[15~'],
    ['PageDown', '\x1b[6~'],
    ['Backspace', '\x7f'],
    ['x', 'x'],
  ])('%s', (name, bytes) => {
    expect(keyBytes(name, normal)).toBe(bytes);
  });

  test('cursor keys follow application cursor mode', () => {
    expect(keyBytes('Up', { applicationCursorKeys: true })).toBe('\x1bOA');
    expect(keyBytes('Home', { applicationCursorKeys: true })).toBe('\x1bOH');
  });

  test.each(['Foo', 'C-Up', 'C-', 'F13', 'C-1'])('unknown key %j is invalid_params', (name) => {
    expect(() => keyBytes(name, normal)).toThrow(expect.objectContaining({ code: 'invalid_params' }));
  });
});

describe('bracketed paste', () => {
  test('markers inside the text are removed, also ones formed by removing others', () => {
    expect(stripPasteMarkers(`a${PASTE_END}b`)).toBe('ab');
    expect(stripPasteMarkers(`x\x1b[20${PASTE_END}1~y`)).toBe('xy');
    expect(stripPasteMarkers(`${PASTE_START}${PASTE_START}z`)).toBe('z');
  });

  test('a pasted text holds exactly one start and one end marker, at its ends', () => {
    const { data, pasted } = encodeText(`echo one${PASTE_END}\necho two`, 'always', false);
    expect(pasted).toBe(true);
    expect(data).toBe(`${PASTE_START}echo one\recho two${PASTE_END}`);
    expect(data.split(PASTE_END)).toHaveLength(2);
  });

  test('auto pastes multi-line text only when the program asked for bracketed paste', () => {
    expect(encodeText('a\nb', 'auto', true).pasted).toBe(true);
    expect(encodeText('a\nb', 'auto', false)).toEqual({ data: 'a\nb', pasted: false });
    expect(encodeText('one line', 'auto', true).pasted).toBe(false);
    expect(encodeText(`raw${PASTE_END}`, 'never', true)).toEqual({ data: `raw${PASTE_END}`, pasted: false });
  });
});
