import { isLetKiteError } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { capOutput, DEFAULT_MAX_CHARS, DEFAULT_MAX_LINES } from './cap';
import { fakePrivateKey, fakeTokens, filler } from './fake-secrets.fixture';
import { maskSecrets } from './mask';
import { PREPARE_MARGIN_CHARS, prepareForAi } from './prepare-for-ai';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');

describe('capOutput', () => {
  test('the defaults are the DESIGN values', () => {
    expect([DEFAULT_MAX_LINES, DEFAULT_MAX_CHARS]).toEqual([2000, 64_000]);
  });

  test('text within both limits is returned unchanged', () => {
    expect(capOutput('a\nb\n')).toEqual({ text: 'a\nb\n', truncated: false });
    expect(capOutput('')).toEqual({ text: '', truncated: false });
  });

  test('the line cap keeps the newest lines', () => {
    expect(capOutput(numbered(10), { maxLines: 3 })).toEqual({ text: 'line 8\nline 9\nline 10', truncated: true });
    expect(capOutput(`${numbered(10)}\n`, { maxLines: 3 })).toEqual({
      text: 'line 8\nline 9\nline 10\n',
      truncated: true,
    });
    expect(capOutput(numbered(3), { maxLines: 3 }).truncated).toBe(false);
    expect(capOutput('\n\nx', { maxLines: 2 })).toEqual({ text: '\nx', truncated: true });
  });

  test('the default line cap keeps 2000 lines', () => {
    const out = capOutput(numbered(2500));
    expect(out.truncated).toBe(true);
    expect(out.text.split('\n')).toHaveLength(2000);
    expect(out.text.startsWith('line 501\n')).toBe(true);
  });

  test('the character cap keeps the newest characters, starting at a line boundary', () => {
    const text = numbered(100);
    const out = capOutput(text, { maxChars: 50 });
    expect(out.truncated).toBe(true);
    expect(out.text.length).toBeLessThanOrEqual(50);
    expect(text.endsWith(out.text)).toBe(true);
    expect(text[text.length - out.text.length - 1]).toBe('\n');
    expect(out.text.endsWith('line 100')).toBe(true);
  });

  test('one long line is cut inside rather than dropped', () => {
    const out = capOutput(`${'x'.repeat(1000)}\n${'y'.repeat(1000)}`, { maxChars: 100 });
    expect(out).toEqual({ text: 'y'.repeat(100), truncated: true });
  });

  test('a cut never splits a surrogate pair', () => {
    const text = '😀'.repeat(100);
    for (const maxChars of [9, 10, 11, 51]) {
      const out = capOutput(text, { maxChars });
      expect(out.text.length).toBeLessThanOrEqual(maxChars);
      expect(out.text).toBe('😀'.repeat(Math.floor(maxChars / 2)));
    }
  });

  test('the tighter of the two limits wins', () => {
    expect(capOutput(numbered(100), { maxLines: 2, maxChars: 1000 }).text).toBe('line 99\nline 100');
    expect(capOutput(numbered(100), { maxLines: 50, maxChars: 9 }).text).toBe('line 100');
  });

  test.each([{ maxLines: 0 }, { maxChars: -1 }, { maxChars: 1.5 }])(
    'limits %j are refused with invalid_params',
    (l) => {
      let error: unknown;
      try {
        capOutput('x', l);
      } catch (e) {
        error = e;
      }
      expect(isLetKiteError(error, 'invalid_params')).toBe(true);
    },
  );
});

describe('prepareForAi', () => {
  const tokens = fakeTokens();

  test('masks and caps, counting the secrets left in the returned text', () => {
    const text = `old ${tokens['github-token']}\n${numbered(5)}\nnew ${tokens['npm-token']} and password=hunter2`;
    expect(prepareForAi(text, { maxLines: 3 })).toEqual({
      text: 'line 4\nline 5\nnew *** and password=***',
      truncated: true,
      masked_count: 2,
    });
  });

  test('a secret cut in half by the cap is not revealed, wherever the cut falls', () => {
    for (const token of Object.values(tokens)) {
      const text = `${filler(200, 1, 'abcdefgh ')}${token}${filler(300, 2, 'abcdefgh ')}`;
      const tokenEnd = 200 + token.length;
      for (let maxChars = 300 + 1; maxChars < 300 + token.length; maxChars += 3) {
        const out = prepareForAi(text, { maxChars });
        expect(out.truncated).toBe(true);
        expect(out.text.length).toBeLessThanOrEqual(maxChars);
        // No run of 6 characters from the token survives (the filler never has digits or capitals in a row).
        for (let i = 0; i + 6 <= token.length; i++) expect(out.text).not.toContain(token.slice(i, i + 6));
        expect(tokenEnd).toBeGreaterThan(text.length - maxChars);
      }
    }
  });

  test('a private key block cut by the line cap is not revealed', () => {
    const key = fakePrivateKey('OPENSSH PRIVATE KEY', 20);
    const body = key.split('\n')[5]!;
    for (let maxLines = 1; maxLines < 25; maxLines++) {
      const out = prepareForAi(`start\n${key}\n$ done`, { maxLines });
      expect(out.text).not.toContain(body.slice(0, 16));
      expect(out.text).not.toContain('PRIVATE');
    }
  });

  test('the result is a fixed point of maskSecrets', () => {
    const text = `${filler(5000, 3, 'ab c\n')}sk-${filler(60, 4)}`;
    const out = prepareForAi(text, { maxChars: 40 });
    expect(maskSecrets(out.text)).toEqual({ text: out.text, masked_count: 0 });
  });

  test('a long text masked through the tail window gives what masking all of it gives', () => {
    const lines = Array.from({ length: 30_000 }, (_, i) =>
      i % 97 === 0 ? `step ${i} ${tokens['github-token']}` : `step ${i} ok ${filler(20, i, 'abcdef0123')}`,
    );
    const text = lines.join('\n');
    expect(text.length).toBeGreaterThan(DEFAULT_MAX_CHARS + PREPARE_MARGIN_CHARS);
    const reference = capOutput(maskSecrets(text).text);
    const out = prepareForAi(text);
    expect(out.text).toBe(reference.text);
    expect(out.truncated).toBe(true);
    expect(out.masked_count).toBe(reference.text.split('***').length - 1);
  });

  test('when masking shrinks the tail window, the whole text is masked instead', () => {
    // A huge key block fills the window; only from the whole text is it paired with its BEGIN line.
    const key = fakePrivateKey('RSA PRIVATE KEY', 2000);
    const text = `${numbered(20_000)}\n${key}\n$ exit`;
    const out = prepareForAi(text, { maxChars: 1000 });
    expect(out.text.endsWith('line 20000\n***\n$ exit')).toBe(true);
    expect(out.text).toBe(capOutput(maskSecrets(text).text, { maxChars: 1000 }).text);
    expect(out.masked_count).toBe(1);
  });
});
