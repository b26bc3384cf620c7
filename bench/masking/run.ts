/**
 * Masking throughput on ordinary log text (no secrets): `npx tsx bench/masking/run.ts`. Prints MB/s for
 * maskSecrets, prepareForAi and the stream masker over 1 MiB. Goal: 1 MiB well under 100 ms.
 */
import { createStreamMasker, maskSecrets, prepareForAi } from '../../apps/gateway/src/output/index';

// Deterministic pseudo-random generator so every run measures the same text.
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

function ordinaryLog(bytes: number): string {
  const rand = seeded(7);
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(rand() * 16)]).join('');
  const b64 = (n: number) =>
    Array.from(
      { length: n },
      () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[Math.floor(rand() * 64)],
    ).join('');
  const lines = [
    () =>
      `2024-05-0${Math.floor(rand() * 9) + 1}T12:00:00Z INFO request id=${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)} GET /api/v1/items?page=${Math.floor(rand() * 100)} 200 ${Math.floor(rand() * 900)}ms`,
    () => `commit ${hex(40)}`,
    () => `-rw-r--r--  1 deploy deploy  ${Math.floor(rand() * 99999)} May  3 12:01 build-${hex(6)}.tar.gz`,
    () => `      "integrity": "sha512-${b64(86)}==",`,
    () => `${hex(64)}  dist/app-${hex(8)}.js`,
    () => `WARN  retrying connection to db.internal:5432 (attempt ${Math.floor(rand() * 5)}) password prompt skipped`,
    () => `    at Object.<anonymous> (/srv/app/node_modules/some-package/lib/index.js:${Math.floor(rand() * 999)}:17)`,
  ];
  const out: string[] = [];
  let size = 0;
  while (size < bytes) {
    const line = lines[Math.floor(rand() * lines.length)]!();
    out.push(line);
    size += line.length + 1;
  }
  return out.join('\n').slice(0, bytes);
}

function measure(name: string, text: string, run: () => void): void {
  run(); // warm up the regex compiler
  const rounds = 10;
  const started = performance.now();
  for (let i = 0; i < rounds; i++) run();
  const ms = (performance.now() - started) / rounds;
  const mb = text.length / (1024 * 1024);
  console.log(
    `${name.padEnd(28)} ${ms.toFixed(1).padStart(7)} ms per MiB   ${(mb / (ms / 1000)).toFixed(1).padStart(7)} MB/s`,
  );
}

const text = ordinaryLog(1024 * 1024);
const masked = maskSecrets(text);
console.log(`1 MiB of ordinary log text, ${text.split('\n').length} lines, masked_count ${masked.masked_count}`);
measure('maskSecrets', text, () => maskSecrets(text));
measure('prepareForAi (default caps)', text, () => prepareForAi(text));
measure('stream masker, 4 KiB chunks', text, () => {
  const masker = createStreamMasker();
  for (let i = 0; i < text.length; i += 4096) masker.push(text.slice(i, i + 4096));
  masker.end();
});
const flat = text.replace(/\n/g, ' ');
measure('maskSecrets, one long line', flat, () => maskSecrets(flat));
const base64Blob = 'A'.repeat(1024 * 1024);
measure('maskSecrets, 1 MiB of "A"', base64Blob, () => maskSecrets(base64Blob));
// The views of issue #11 at their worst: everything URL-encoded, base64 of text wrapped at 76, hex dump lines,
// colour codes and zero-width characters everywhere (each must stay linear).
const encoded = '%41'.repeat(Math.floor((1024 * 1024) / 3));
measure('maskSecrets, 1 MiB of %41', encoded, () => maskSecrets(encoded));
const wrapped = (
  Buffer.from(text.slice(0, 786_432))
    .toString('base64')
    .match(/.{1,76}/g) ?? []
).join('\n');
measure('maskSecrets, base64 of the log', wrapped, () => maskSecrets(wrapped));
const dump = Array.from(
  { length: 16_384 },
  (_, i) => `${(i * 16).toString(16).padStart(8, '0')}: 4142 4344 4546 4748 494a 4b4c 4d4e 4f50  ABCDEFGHIJKLMNOP`,
).join('\n');
measure('maskSecrets, xxd-like dump', dump, () => maskSecrets(dump));
const invisible = text.replace(/ /g, '\x1b[0m\u200b ');
measure('maskSecrets, colour + ZWSP log', invisible, () => maskSecrets(invisible));
