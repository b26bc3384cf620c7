import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { fakePrivateKey, fakeTokens, filler, fold } from './fake-secrets.fixture';
import { maskSecrets } from './mask';
import { maskCutStart, maskWindow } from './mask-window';
import { createOutputMasker } from './output-masker';
import { prepareForAi } from './prepare-for-ai';
import { compileRedactionPatterns } from './redaction-patterns';
import { createStreamMasker } from './stream-masker';

const tokens = fakeTokens(5);
const GH = tokens['github-token'] as string;
const STRIPE = tokens['stripe-live-key'] as string;

/** Whether any 8 consecutive characters of the secret show. */
function shows(text: string, secret: string): boolean {
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) return true;
  return false;
}
const hex = (s: string) => Buffer.from(s).toString('hex');
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** What `xxd` prints. */
function xxd(data: string): string {
  const bytes = Buffer.from(data);
  const lines: string[] = [];
  for (let off = 0; off < bytes.length; off += 16) {
    const row = bytes.subarray(off, off + 16);
    const groups = (row.toString('hex').match(/.{1,4}/g) ?? []).join(' ');
    const text = [...row].map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${off.toString(16).padStart(8, '0')}: ${groups.padEnd(39)}  ${text}`);
  }
  return `${lines.join('\n')}\n`;
}
/** What `od -A x -t x2` (little-endian 16-bit words) prints. */
function odWords(data: string): string {
  const bytes = Buffer.from(data.length % 2 ? `${data}\n` : data);
  const lines: string[] = [];
  for (let off = 0; off < bytes.length; off += 16) {
    const words: string[] = [];
    for (let i = off; i < Math.min(off + 16, bytes.length); i += 2) {
      words.push(bytes.readUInt16LE(i).toString(16).padStart(4, '0'));
    }
    lines.push(`${off.toString(16).padStart(6, '0')} ${words.join(' ')}`);
  }
  return `${lines.join('\n')}\n`;
}

describe('escape sequences and invisible characters are seen through', () => {
  const colour = (s: string) => `\x1b[01;31m\x1b[K${s}\x1b[m\x1b[K`;
  const cases: [string, string][] = [
    ['grep colour inside the token', `t ${GH.slice(0, 9)}${colour(GH.slice(9, 15))}${GH.slice(15)} end`],
    ['grep colour around the token', `t ${colour(GH)} end`],
    ['a cursor move between halves', `t ${GH.slice(0, 20)}\x1b[1C${GH.slice(20)} end`],
    ['an OSC title between halves', `t ${GH.slice(0, 20)}\x1b]0;title\x07${GH.slice(20)} end`],
    ['zero-width characters', `t ${[...GH].join('\u200b')} end`],
    ['a soft hyphen and a BOM', `t ${GH.slice(0, 10)}\u00ad${GH.slice(10, 20)}\ufeff${GH.slice(20)} end`],
    ['NUL bytes', `t ${GH.slice(0, 10)}\0${GH.slice(10)} end`],
    ['man-page overstrike', `t ${[...GH].map((c) => `${c}\b${c}`).join('')} end`],
  ];
  test.each(cases)('%s', (_name, text) => {
    const masked = maskSecrets(text);
    expect(
      shows(masked.text.replace(/\x1b\[[0-9;]*[A-Za-z]|\x1b\][^\x07]*\x07|[\u200b\u00ad\ufeff\0\b]/g, ''), GH),
    ).toBe(false);
    expect(masked.masked_count).toBe(1);
    expect(masked.text.startsWith('t ')).toBe(true);
    expect(masked.text.endsWith(' end')).toBe(true);
  });

  test('colours inside a masked range are kept after the ***, so the line keeps its colours', () => {
    const text = `t ${GH.slice(0, 9)}\x1b[01;31m${GH.slice(9, 15)}\x1b[m${GH.slice(15)} end`;
    expect(maskSecrets(text).text).toBe('t ***\x1b[01;31m\x1b[m end');
  });

  test('coloured output without secrets is left as it is', () => {
    const ls = '\x1b[0m\x1b[01;34mbin\x1b[0m  \x1b[01;32mdeploy.sh\x1b[0m\n\x1b]0;user@host: ~\x07$ ';
    expect(maskSecrets(ls)).toEqual({ text: ls, masked_count: 0 });
  });
});

describe('URL-encoded secrets are decoded and masked', () => {
  const cases: [string, string, string][] = [
    [
      'a whole connection URL encoded in a query',
      'next=postgres%3A%2F%2Fapp%3AS3cr3tPassw0rdX9%40db%2Fprod',
      'next=postgres%3A%2F%2Fapp%3A***%40db%2Fprod',
    ],
    ['a token with an encoded underscore', `t=${GH.replace('_', '%5F')}&x=1`, 't=***&x=1'],
    [
      'twice encoded',
      `r=https%253A%252F%252Fx%252F%253Ftoken%253D${STRIPE}`,
      'r=https%253A%252F%252Fx%252F%253Ftoken%253D***',
    ],
    ['an encoded password in a plain URL', 'postgres://app:p%40ssW0rd9@db/prod', 'postgres://app:***@db/prod'],
    ['every character encoded', `k=${[...GH].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}`, 'k=***'],
  ];
  test.each(cases)('%s', (_name, text, expected) => {
    expect(maskSecrets(text).text).toBe(expected);
  });

  test('ordinary encoded URLs stay', () => {
    const text = 'GET /search?q=hello%20world&lang=en%2DUS&path=%2Fsrv%2Fapp 200';
    expect(maskSecrets(text)).toEqual({ text, masked_count: 0 });
  });
});

describe('hex runs and hex dumps are decoded and masked', () => {
  const data = `config: token=${GH}\nkey=${STRIPE}\n`;
  test('a plain hex run, also wrapped at 60 like xxd -p', () => {
    for (const text of [hex(data), fold(hex(data), 60)]) {
      const masked = maskSecrets(text);
      expect(shows(Buffer.from(masked.text.replace(/[^0-9a-f]/g, ''), 'hex').toString('latin1'), GH)).toBe(false);
      expect(shows(Buffer.from(masked.text.replace(/[^0-9a-f]/g, ''), 'hex').toString('latin1'), STRIPE)).toBe(false);
    }
  });

  test('an xxd dump: neither the hex columns nor the text column show the secret', () => {
    const masked = maskSecrets(xxd(data)).text;
    expect(shows(masked, GH)).toBe(false);
    const hexColumns = masked
      .split('\n')
      .map((l) => /^[0-9a-f]{8}: ((?:[0-9a-f]{4} ?)+)/.exec(l)?.[1]?.replace(/ /g, '') ?? '')
      .join('');
    expect(shows(Buffer.from(hexColumns, 'hex').toString('latin1'), GH)).toBe(false);
    expect(masked.startsWith('00000000: 636f 6e66')).toBe(true);
  });

  test('little-endian words (od -x) and byte lists (\\xNN, xxd -i)', () => {
    for (const text of [
      odWords(data),
      [...Buffer.from(data)].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join(''),
      fold([...Buffer.from(data)].map((b) => `0x${b.toString(16).padStart(2, '0')}, `).join(''), 72),
    ]) {
      const masked = maskSecrets(text);
      expect(masked.masked_count, text.slice(0, 40)).toBeGreaterThan(0);
      const bytes = (masked.text.match(/(?:\\x|0x)([0-9a-f]{2})/g) ?? []).map((h) => h.slice(2)).join('');
      expect(shows(Buffer.from(bytes, 'hex').toString('latin1'), GH)).toBe(false);
    }
  });

  test('od in every format (octal words, octal bytes, characters) and hexdump words', () => {
    const od = (bytes: Buffer, f: 'c' | 'b' | 'o') => {
      const lines: string[] = [];
      for (let off = 0; off < bytes.length; off += 16) {
        const row = [...bytes.subarray(off, off + 16)];
        const fields =
          f === 'c'
            ? row
                .map((b) =>
                  b === 10
                    ? '  \\n'
                    : b >= 32 && b < 127
                      ? `   ${String.fromCharCode(b)}`
                      : ` ${b.toString(8).padStart(3, '0')}`,
                )
                .join('')
            : f === 'b'
              ? ` ${row.map((b) => b.toString(8).padStart(3, '0')).join(' ')}`
              : ` ${Array.from({ length: row.length / 2 }, (_, i) => (row[2 * i]! + 256 * row[2 * i + 1]!).toString(8).padStart(6, '0')).join(' ')}`;
        lines.push(`${off.toString(8).padStart(7, '0')}${fields}`);
      }
      return `${lines.join('\n')}\n`;
    };
    const bytes = Buffer.from(data.length % 2 ? `${data}\n` : data);
    for (const f of ['c', 'b', 'o'] as const) {
      const masked = maskSecrets(od(bytes, f));
      expect(masked.masked_count, `od -${f}`).toBeGreaterThan(0);
      expect(masked.text.split('\n')[1], `od -${f}`).toBe('');
    }
    expect(maskSecrets(odWords(data)).text).not.toMatch(/ 68\*\*\*/);
  });

  test('digests and ids stay', () => {
    const text = `commit ${filler(40, 1, '0123456789abcdef')}\n${filler(64, 2, '0123456789abcdef')}  app.js\n`;
    expect(maskSecrets(text)).toEqual({ text, masked_count: 0 });
  });
});

describe('base64 runs where a token would hide are decoded and masked', () => {
  test('standard, URL alphabet, and wrapped at 76', () => {
    const data = `export GITHUB_TOKEN=${GH}\nSTRIPE=${STRIPE}\n${'filler line\n'.repeat(8)}`;
    const urlSafe = Buffer.from(data).toString('base64url');
    for (const text of [b64(data), urlSafe, fold(b64(data), 76), `data:text/plain;base64,${b64(data)}`]) {
      const masked = maskSecrets(text);
      expect(masked.masked_count, text.slice(0, 30)).toBeGreaterThan(0);
      const decoded = Buffer.from(masked.text.replace(/^data:[^,]*,/, '').replace(/[^A-Za-z0-9+/_-]/g, ''), 'base64');
      expect(shows(decoded.toString('latin1'), GH)).toBe(false);
      expect(shows(decoded.toString('latin1'), STRIPE)).toBe(false);
    }
  });

  test('base64 of a private key file is masked', () => {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const body = pem.split('\n')[1] as string;
    const masked = maskSecrets(fold(b64(`${pem}\n`), 76));
    expect(shows(Buffer.from(masked.text.replace(/[^A-Za-z0-9+/]/g, ''), 'base64').toString('latin1'), body)).toBe(
      false,
    );
  });

  test('base64 of ordinary data and of binary stays', () => {
    const text = [
      b64('just some ordinary configuration text, nothing secret in here at all\n'),
      `"integrity": "sha512-${Buffer.from(filler(64, 3)).toString('base64')}"`,
      Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) % 256)).toString('base64'),
    ].join('\n');
    expect(maskSecrets(text)).toEqual({ text, masked_count: 0 });
  });
});

describe("LetKite's own secrets", () => {
  const body = filler(43, 4, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
  test.each(['lk_', 'lkj_', 'lka_', 'lkr_', 'lkc_', 'lks_', 'lkinv_', 'lksetup_'])('%s tokens', (prefix) => {
    expect(maskSecrets(`token: ${prefix}${body}\n`).text).toBe('token: ***\n');
    expect(maskSecrets(`Authorization: x ${prefix}${body} y`).text).toBe('Authorization: x *** y');
    expect(maskSecrets(`http://gw:8787/setup#${prefix}${body}`).text).toBe('http://gw:8787/setup#***');
  });

  test('an authenticator URI and the agent state file', () => {
    expect(
      maskSecrets('otpauth://totp/LetKite:ann?issuer=LetKite&secret=JBSWY3DPEHPK3PXPJBSWY3DP&period=30').text,
    ).toBe('otpauth://totp/LetKite:ann?issuer=LetKite&secret=***&period=30');
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const state = JSON.stringify({ machine_id: 'mch_1', private_key_pem: pem }, null, 2);
    expect(shows(maskSecrets(state).text, pem.split('\n')[1] as string)).toBe(false);
  });

  test('words that merely start like a token stay', () => {
    const text = 'bulk_insert lk_ lk_short walk_the_dog_and_then_go_home_for_a_nice_long_rest_now';
    expect(maskSecrets(text)).toEqual({ text, masked_count: 0 });
  });
});

describe('maskWindow', () => {
  const text = `${'line of text\n'.repeat(30)}A=${GH} b=${STRIPE}\n${fakePrivateKey()}\n${'tail\n'.repeat(10)}`;
  const secrets = [GH, STRIPE, fakePrivateKey().split('\n')[2] as string];

  test('no window cut anywhere shows part of a secret, and a cut secret is *** on both sides', () => {
    const at = text.indexOf(GH);
    for (let cut = at - 2; cut < text.length; cut += cut < at + 200 ? 1 : 7) {
      const left = maskWindow(text, 0, cut);
      const right = maskWindow(text, cut, text.length);
      for (const s of secrets) {
        expect(shows(left.text, s), `left of ${cut}`).toBe(false);
        expect(shows(right.text, s), `right of ${cut}`).toBe(false);
      }
      if (cut > at && cut < at + GH.length) {
        expect(left.text.endsWith('***')).toBe(true);
        expect(right.text.startsWith('***')).toBe(true);
      }
    }
  });

  test('a window inside a secret is only ***; masked_count counts what the window shows', () => {
    const at = text.indexOf(GH);
    expect(maskWindow(text, at + 5, at + 20)).toEqual({ text: '***', masked_count: 1 });
    expect(maskWindow(text, 0, 20)).toEqual({ text: text.slice(0, 20), masked_count: 0 });
  });
});

describe('maskCutStart', () => {
  test('the first word of text cut at an unknown point is masked: it may be the tail of a secret', () => {
    expect(maskCutStart(`${GH.slice(12)} rest\nnext`)).toEqual({ text: '*** rest\nnext', masked_count: 1 });
    expect(maskCutStart('ssword=hunter2 rest')).toEqual({ text: '*** rest', masked_count: 1 });
    expect(maskCutStart(' starts with a space')).toEqual({ text: ' starts with a space', masked_count: 0 });
    expect(maskCutStart('*** already')).toEqual({ text: '*** already', masked_count: 0 });
  });
});

describe('createOutputMasker', () => {
  test("applies the account's patterns everywhere, audit values included", () => {
    const masker = createOutputMasker(['ACME-[0-9]{6}']);
    expect(masker.mask('code ACME-123456 ok').text).toBe('code *** ok');
    expect(masker.prepare('code ACME-123456 ok')).toMatchObject({ text: 'code *** ok', masked_count: 1 });
    expect(masker.maskValue({ command: `echo ACME-123456 ${GH}`, argv: ['a', `password=${STRIPE}`], n: 3 })).toEqual({
      command: 'echo *** ***',
      argv: ['a', 'password=***'],
      n: 3,
    });
    // An account pattern inside base64 or split by colour is seen through too.
    expect(masker.mask(b64('the ACME-123456 code and more')).masked_count).toBe(1);
    expect(masker.mask('ACME-\x1b[1m123456\x1b[m').text).toBe('***\x1b[1m\x1b[m');
  });

  test('many strings are masked together and each comes back in its place', () => {
    const masker = createOutputMasker(['ACME-[0-9]{6}']);
    const entries = Array.from({ length: 50 }, (_, i) => ({ name: `file-${i}.txt`, path: `/srv/${i}` }));
    entries[7] = { name: `${GH}.txt`, path: '/srv/ACME-123456' };
    entries[8] = { name: '-----BEGIN PRIVATE KEY-----', path: fakePrivateKey().split('\n').slice(1).join('\n') };
    const out = masker.maskValue({ entries });
    expect(out.entries[7]).toEqual({ name: '***.txt', path: '/srv/***' });
    expect(out.entries[8]?.path).not.toContain(fakePrivateKey().split('\n')[2]);
    expect(out.entries.filter((_e, i) => i !== 7 && i !== 8)).toEqual(entries.filter((_, i) => i !== 7 && i !== 8));
  });

  test('invalid stored patterns fail closed', () => {
    expect(() => createOutputMasker(['('])).toThrow();
    expect(compileRedactionPatterns([]).length).toBe(0);
  });
});

describe('the stream masker with escape sequences and encoded runs', () => {
  test('chunks that split an escape sequence or a base64 run give what masking the whole text gives', () => {
    const words = filler(5000, 1, 'abcdefgh ij klm\n');
    const text = `${words} \x1b[01;31m${GH}\x1b[m\n${words}\n${b64(`${'x'.repeat(3000)} token=${STRIPE}`)}\n${words}`;
    const whole = maskSecrets(text);
    expect(whole.masked_count).toBe(2);
    for (const size of [1000, 4097, 7919]) {
      const masker = createStreamMasker({ holdChars: 256, maxHoldChars: 65_536 });
      let out = '';
      for (let i = 0; i < text.length; i += size) out += masker.push(text.slice(i, i + size));
      out += masker.end();
      expect(shows(out, GH), `chunks of ${size}`).toBe(false);
      expect(out, `chunks of ${size}`).toBe(whole.text);
    }
  });
});

describe('property: no planted secret survives, however it is encoded and wherever a window cuts', () => {
  let seed = 11;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const encodings: [string, (s: string) => string, (masked: string) => string][] = [
    ['plain', (s) => s, (m) => m],
    [
      'ansi',
      (s) => `${s.slice(0, 7)}\x1b[1;3${rand(8)}m${s.slice(7, 19)}\x1b[0m${s.slice(19)}`,
      (m) => m.replace(/\x1b\[[0-9;]*m/g, ''),
    ],
    ['url', (s) => encodeURIComponent(s).replace(/_/g, '%5F').replace(/-/g, '%2D'), (m) => m.replace(/%5F/g, '_')],
    ['hex', (s) => hex(s), (m) => Buffer.from(m.replace(/[^0-9a-f]/g, ''), 'hex').toString('latin1')],
    ['xxd', (s) => xxd(s), (m) => m],
    [
      'base64',
      (s) => fold(b64(s), 76),
      (m) => Buffer.from(m.replace(/[^A-Za-z0-9+/]/g, ''), 'base64').toString('latin1'),
    ],
  ];
  const all = Object.values(tokens);

  test.each(encodings)('%s', (_name, encode, decode) => {
    for (let round = 0; round < 40; round++) {
      const secret = all[rand(all.length)]!;
      const before = filler(rand(200) + 20, rand(30), 'abcdefgh ij klm\n');
      const encoded = encode(`key: ${secret}\n`);
      const text = `${before}\n${encoded}\nafter ${filler(rand(100) + 5, rand(30), 'nopq rst\n')}`;
      const masked = maskSecrets(text);
      expect(shows(decode(masked.text), secret), `round ${round}: ${secret.slice(0, 8)}`).toBe(false);
      expect(maskSecrets(masked.text).text).toBe(masked.text);
      const cut = rand(text.length);
      for (const part of [maskWindow(text, 0, cut).text, maskWindow(text, cut, text.length).text]) {
        expect(shows(part, secret), `round ${round}, cut at ${cut}`).toBe(false);
      }
    }
  });
});

describe('text cut off before its start decodes a run at its start at every alignment', () => {
  const raw = `${filler(80_000, 2, 'abcdefghij klmnop\n')} key=${GH} ${filler(30_000, 3, 'qrstuv wxyz\n')}`;
  const blob = b64(raw);
  const tokenAt = Math.floor(raw.indexOf(GH) / 3) * 4;

  test('maskWindow with cutAtStart, wherever the margin begins', () => {
    for (const shift of [0, 1, 2, 3]) {
      const start = tokenAt - 2400 + shift;
      const text = blob.slice(start);
      // The window itself starts at any alignment too, so that its own second pass cannot find the token.
      for (const from of [1001, 1002, 1003, 1004]) {
        const masked = maskWindow(text, from, text.length - 5000, { cutAtStart: true });
        expect(masked.masked_count, `margin at ${start}, window at ${from}`).toBeGreaterThan(0);
      }
    }
  });

  test('prepareForAi on a long single-line base64 tail masks a token near its end', () => {
    expect(blob.length).toBeGreaterThan(64_000 + 65_536);
    for (const extra of ['', 'x', 'xy', 'xyz']) {
      const text = `${extra}${blob}`;
      const out = prepareForAi(text);
      expect(out.truncated).toBe(true);
      const decodedTail = Buffer.from(
        out.text.replace(/[^A-Za-z0-9+/]/g, '').slice(-(out.text.length - 8) & ~3),
        'base64',
      );
      expect(out.masked_count, `prefix "${extra}"`).toBeGreaterThan(0);
      expect(decodedTail.length).toBeGreaterThan(0);
    }
  });
});
