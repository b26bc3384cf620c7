import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { ansiCQuote, commandLine, MarkerScanner, markers, parseStatusTrailer, SESSION_PRELUDE } from './sentinel';

function scanAll(stream: Buffer, nonce: string, chunkSize: number) {
  const out: Buffer[] = [];
  let status: ReturnType<typeof parseStatusTrailer> = null;
  const scanner = new MarkerScanner(
    markers(nonce).stdout,
    (c) => out.push(Buffer.from(c)),
    (rest) => {
      status = parseStatusTrailer(rest);
      return status ? status.consumed : -1;
    },
  );
  for (let i = 0; i < stream.length; i += chunkSize) scanner.push(stream.subarray(i, i + chunkSize));
  return {
    output: Buffer.concat(out).toString('utf8'),
    status: status as ReturnType<typeof parseStatusTrailer>,
    complete: scanner.complete,
  };
}

describe('sentinel protocol', () => {
  test.each([1, 3, 7, 1000])(
    'finds the marker split over chunks of %i bytes, output without a final newline',
    (size) => {
      const nonce = 'ab12';
      const stream = Buffer.from(`partial line${markers(nonce).stdout}3:8:/tmp/a\nb\n`);
      const r = scanAll(stream, nonce, size);
      expect(r.complete).toBe(true);
      expect(r.output).toBe('partial line');
      expect(r.status?.status).toEqual({ exitCode: 3, cwd: '/tmp/a\nb' });
    },
  );

  test('a marker with another nonce is output, not a delimiter', () => {
    const fake = `${markers('0000').stdout}0:1:/\n`;
    const r = scanAll(Buffer.from(`${fake}real${markers('ffff').stdout}0:1:/\n`), 'ffff', 5);
    expect(r.output).toBe(`${fake}real`);
    expect(r.status?.status.exitCode).toBe(0);
  });

  test('an incomplete trailer waits for more bytes', () => {
    expect(parseStatusTrailer(Buffer.from('0:5:/tm'))).toBeNull();
    expect(parseStatusTrailer(Buffer.from('0:5:/tmp/'))).toBeNull();
    expect(parseStatusTrailer(Buffer.from('0:5:/tmp/\n'))?.status).toEqual({ exitCode: 0, cwd: '/tmp/' });
  });

  test('a non-UTF-8 cwd length counts bytes', () => {
    const cwd = '/tmp/é';
    const r = parseStatusTrailer(Buffer.from(`0:${Buffer.byteLength(cwd)}:${cwd}\n`));
    expect(r?.status.cwd).toBe(cwd);
  });

  test.each([
    'echo "unbalanced',
    "printf '%s\\n' 'it''s' $'tab\\there'",
    'a=1\nb=2\necho $((a+b))',
    'echo ✓ 😀 \\x41',
    "echo '}' ; echo \"$'\\\\'\"",
  ])('bash reads the quoted command back byte for byte: %j', (command) => {
    const quoted = ansiCQuote(command);
    const back = execFileSync('/bin/bash', ['--norc', '-c', `printf %s ${quoted}`]).toString('utf8');
    expect(back).toBe(command);
  });

  test('a real bash reports status and cwd, and a syntax error does not swallow the sentinel', () => {
    const nonce = 'c0ffee';
    const script =
      SESSION_PRELUDE + commandLine('echo "oops', 'n1') + commandLine('cd /tmp && printf x; (exit 4)', nonce);
    const stdout = execFileSync('/bin/bash', ['--norc'], { input: script }).toString('utf8');
    const at = stdout.indexOf(markers(nonce).stdout);
    expect(at).toBeGreaterThan(0);
    expect(stdout.slice(at + markers(nonce).stdout.length)).toBe('4:4:/tmp\n');
    expect(stdout.slice(0, at).endsWith('x')).toBe(true);
    expect(stdout).toContain(`${markers('n1').stdout}2:`);
  });
});
