import { expect, test } from 'vitest';
import { fakePrivateKey, fakeTokens } from './fake-secrets.fixture';
import { maskSecrets } from './mask';
import { prepareForAi } from './prepare-for-ai';
import { compileRedactionPatterns } from './redaction-patterns';

/** mulberry32: a small seeded generator, so a failure names the seed that reproduces it. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ordinary = [
  'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
  '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  'drwxr-xr-x  5 deploy deploy 4096 May  3 12:01 src',
  '"integrity": "sha512-aGVsbG8gd29ybGQsIHRoaXMgaXMgYW4gb3JkaW5hcnkgc2VudGVuY2U=",',
  'GET /api/v1/items?page=2 200 13ms',
  'the password is required',
  'done.',
  '$',
];
const separators = [' ', '\n', '=', ': ', '"', "'", '\t', '\r\n'];

/** A text of ordinary lines with planted secrets, some wrapped at a random column. */
function plantedText(rand: () => number, seed: number): { text: string; planted: string[] } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const tokens = [...Object.values(fakeTokens(seed)), `corp-${seed.toString(36).padStart(8, 'x')}zz`];
  const planted: string[] = [];
  let text = '';
  const parts = 5 + Math.floor(rand() * 20);
  for (let i = 0; i < parts; i++) {
    text += pick(separators);
    const r = rand();
    if (r < 0.5) {
      text += pick(ordinary);
    } else if (r < 0.9) {
      let token = pick(tokens);
      planted.push(token);
      if (rand() < 0.5) {
        const at = 1 + Math.floor(rand() * (token.length - 1));
        token = `${token.slice(0, at)}${pick(['\n', '\r\n'])}${token.slice(at)}`;
      }
      text += token;
    } else {
      const key = fakePrivateKey(pick(['RSA PRIVATE KEY', 'OPENSSH PRIVATE KEY', 'PRIVATE KEY']), 3, seed);
      planted.push(key.split('\n')[1]!);
      text += `\n${key}\n`;
    }
    text += pick(separators.filter((s) => s !== '='));
  }
  return { text, planted };
}

const extraPatterns = compileRedactionPatterns(['corp-[0-9a-z]{8}zz']);

test('no planted secret survives masking, even wrapped, and masking the result changes nothing', () => {
  for (let seed = 1; seed <= 500; seed++) {
    const rand = seeded(seed);
    const { text, planted } = plantedText(rand, seed);
    const out = maskSecrets(text, { extraPatterns });
    const unwrapped = out.text.replace(/[\r\n]/g, '');
    for (const secret of planted) {
      expect(unwrapped, `seed ${seed}`).not.toContain(secret);
      expect(unwrapped, `seed ${seed}`).not.toContain(secret.slice(-12));
    }
    expect(out.masked_count, `seed ${seed}`).toBeGreaterThanOrEqual(planted.length > 0 ? 1 : 0);
    expect(maskSecrets(out.text, { extraPatterns }), `seed ${seed}`).toEqual({ text: out.text, masked_count: 0 });
  }
});

test('no planted secret survives prepareForAi at any cap', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const rand = seeded(seed * 7919);
    const { text, planted } = plantedText(rand, seed);
    const maxChars = 20 + Math.floor(rand() * text.length);
    const out = prepareForAi(text, { maxChars, maxLines: 1 + Math.floor(rand() * 40), extraPatterns });
    expect(out.text.length).toBeLessThanOrEqual(maxChars);
    const unwrapped = out.text.replace(/[\r\n]/g, '');
    for (const secret of planted) {
      for (let i = 0; i + 12 <= secret.length; i += 4) {
        expect(unwrapped, `seed ${seed}`).not.toContain(secret.slice(i, i + 12));
      }
    }
  }
});
