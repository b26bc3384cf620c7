import { describe, expect, test } from 'vitest';
import { visibleParts, visibleText } from './visible-text';

describe('visibleText', () => {
  test.each([
    ['a\nb', 'a␊\nb'],
    ['\u001b[31mred', '␛[31mred'],
    ['tab\there\r', 'tab␉here␍'],
    ['nul\u0000', 'nul␀'],
    ['del\u007f', 'del␡'],
    ['rm -rf /tmp/\u202excod.sh', 'rm -rf /tmp/<U+202E>xcod.sh'],
    ['zero\u200bwidth\ufeff', 'zero<U+200B>width<U+FEFF>'],
    ['nb\u00a0sp', 'nb<U+00A0>sp'],
    ['soft\u00adhyphen', 'soft<U+00AD>hyphen'],
    ['c1\u0085', 'c1<U+0085>'],
    ['tag\u{e0041}', 'tag<U+E0041>'],
    ['lone\ud800x', 'lone<U+D800>x'],
    ['git push origin main', 'git push origin main'],
    ['ünïcödé 😀 日本', 'ünïcödé 😀 日本'],
  ])('%j shows as %j', (input, shown) => {
    expect(visibleText(input)).toBe(shown);
  });

  test('symbols are marked so the page can highlight them', () => {
    expect(visibleParts('a\u202eb')).toEqual([
      { text: 'a', special: false },
      { text: '<U+202E>', special: true },
      { text: 'b', special: false },
    ]);
  });
});
