import { isLetKiteError } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { fakePrivateKey, fakeTokens, filler } from './fake-secrets.fixture';
import { maskSecrets } from './mask';
import { compileRedactionPatterns } from './redaction-patterns';
import { createStreamMasker, type StreamMaskerOptions } from './stream-masker';

const words = (n: number, seed: number) => filler(n, seed, 'abcdefgh ij klm\n');

function streamed(chunks: readonly string[], options: StreamMaskerOptions = {}) {
  const masker = createStreamMasker(options);
  const text = chunks.map((c) => masker.push(c)).join('') + masker.end();
  return { text, masked_count: masker.masked_count };
}

describe('createStreamMasker', () => {
  const tokens = fakeTokens();
  const holdChars = 256;

  test.each(Object.entries(tokens))('%s split at every position is masked as in the whole text', (_name, token) => {
    const text = `${words(1500, 1)} token=${token} ${words(900, 2)}`;
    const whole = maskSecrets(text);
    expect(whole.masked_count).toBeGreaterThan(0);
    const start = text.indexOf(token);
    for (let at = start - 8; at <= start + token.length + 8; at++) {
      expect(streamed([text.slice(0, at), text.slice(at)], { holdChars }), `split at ${at}`).toEqual(whole);
    }
  });

  test('a wrapped token and a key block arriving one character at a time', () => {
    const token = tokens['anthropic-key']!;
    const text = `${words(700, 3)}\nkey ${token.slice(0, 30)}\n${token.slice(30)} end\n${fakePrivateKey()}\n${words(2000, 4)}`;
    const whole = maskSecrets(text);
    expect(whole.masked_count).toBe(2);
    expect(streamed([...text], { holdChars })).toEqual(whole);
  });

  test('chunks of every size from 1 to 97 give the same masked text', () => {
    const text = `${words(400, 5)}${Object.values(tokens).join(` ${words(300, 6)} `)}${words(400, 7)}`;
    const whole = maskSecrets(text);
    for (let size = 1; size < 98; size += 6) {
      const chunks = Array.from({ length: Math.ceil(text.length / size) }, (_, i) =>
        text.slice(i * size, (i + 1) * size),
      );
      expect(streamed(chunks, { holdChars }), `chunks of ${size}`).toEqual(whole);
    }
  });

  test('output is emitted while the stream runs, holding back a bounded tail', () => {
    const masker = createStreamMasker({ holdChars });
    let emitted = 0;
    let pushed = 0;
    for (let i = 0; i < 200; i++) {
      const chunk = words(100, i);
      pushed += chunk.length;
      emitted += masker.push(chunk).length;
      expect(pushed - emitted).toBeLessThanOrEqual(5 * holdChars);
    }
    expect(emitted + masker.end().length).toBe(pushed);
  });

  test('a key block longer than the hold limit is emitted as *** and its remaining lines are swallowed', () => {
    const key = fakePrivateKey('OPENSSH PRIVATE KEY', 400);
    const body = key.split('\n')[300]!;
    const text = `before\n${key}\nafter ${words(3000, 8)}`;
    const chunks = text.match(/[\s\S]{1,100}/g)!;
    const out = streamed(chunks, { holdChars, maxHoldChars: 4096 });
    expect(out.text).not.toContain(body.slice(0, 12));
    expect(out.text).not.toContain('PRIVATE');
    expect(out.text.startsWith('before\n***')).toBe(true);
    expect(out.text).toContain(`***\nafter ${words(3000, 8).slice(0, 50)}`);
    expect(out.masked_count).toBe(1);
  });

  test('account patterns are masked across chunks', () => {
    const extraPatterns = compileRedactionPatterns(['corp-[a-z]{30}']);
    const text = `${words(1000, 9)} corp-${filler(30, 1, 'abcdefghijklmnopqrstuvwxyz')} ${words(1000, 10)}`;
    const whole = maskSecrets(text, { extraPatterns });
    expect(whole.masked_count).toBe(1);
    const at = text.indexOf('corp-') + 12;
    expect(streamed([text.slice(0, at), text.slice(at)], { holdChars, extraPatterns })).toEqual(whole);
  });

  test.each([{ holdChars: 10 }, { holdChars: 4096, maxHoldChars: 8192 }])('options %j are refused', (options) => {
    let error: unknown;
    try {
      createStreamMasker(options);
    } catch (e) {
      error = e;
    }
    expect(isLetKiteError(error, 'invalid_params')).toBe(true);
  });
});
