import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { evaluateCommand } from './evaluate';
import { CommandPolicy, type Verdict } from './policy-schema';
import { loadCommandRules } from './shell-parser';
import { verdictStrictness } from './verdict';

/**
 * Program-level attacks, tried for real: each command is first run by bash in a throwaway directory and must leave
 * its side effect (a file written, a command run), which proves the attack works on this machine; then the rules
 * must not let it through. Wrappers are proven the same way with a harmless inner command (`touch`), and the
 * wipe they could carry must be denied.
 */

let dir = '';
beforeAll(async () => {
  await loadCommandRules();
  dir = mkdtempSync(join(tmpdir(), 'letkite-program-attacks-'));
  writeFileSync(join(dir, 'in.txt'), 'b\na\n');
  writeFileSync(join(dir, 'in2.txt'), 'b\na\n');
  mkdirSync(join(dir, 'tx'));
  mkdirSync(join(dir, 'ty'));
  writeFileSync(join(dir, 'magic'), '0 string letkite letkite file\n');
  execFileSync('tar', ['-cf', join(dir, 'x.tar'), '-C', dir, 'in.txt']);
  execFileSync('git', ['init', '-q', join(dir, 'repo')]);
  execFileSync('git', [
    '-C',
    join(dir, 'repo'),
    '-c',
    'user.email=a@b',
    '-c',
    'user.name=a',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'x',
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readonly = CommandPolicy.parse({ rulesets: ['linux-readonly'] });
const readonlyOpen = CommandPolicy.parse({ rulesets: ['linux-readonly', 'no-destructive'], default: 'allow' });

function have(program: string): boolean {
  try {
    execFileSync('bash', ['-c', `command -v ${program}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function runInBash(command: string): void {
  try {
    execFileSync('bash', ['-c', command], { cwd: dir, stdio: 'ignore', timeout: 20_000, input: '' });
  } catch {
    // the side effect is what counts, not the exit status
  }
}

function atLeast(verdict: Verdict, floor: Verdict): boolean {
  return verdictStrictness(verdict) >= verdictStrictness(floor);
}

/** [program needed, command ($D is the throwaway directory), file that proves it ran]. */
const writesUnderReadonly: Array<[string, string, string]> = [
  ['gawk', `awk -W x 'BEGIN{system("touch $D/awk-W")}'`, 'awk-W'],
  ['gawk', `awk -W interactive 'BEGIN{system("touch $D/awk-W2")}'`, 'awk-W2'],
  ['gawk', `awk -o$D/awk-o 'BEGIN{print 1}'`, 'awk-o'],
  ['gawk', `awk -d$D/awk-d 'BEGIN{x=1}'`, 'awk-d'],
  ['gawk', `awk -p$D/awk-p 'BEGIN{x=1}'`, 'awk-p'],
  ['gawk', `awk 'BEGIN{print 1 > "$D/awk-redirect"}'`, 'awk-redirect'],
  ['git', `cd $D/repo && git log --output=$D/git-output -1`, 'git-output'],
  ['git', `cd $D/repo && git diff HEAD --output=$D/git-diff-output`, 'git-diff-output'],
  ['git', `git -C $D/repo show --output=$D/git-show-output`, 'git-show-output'],
  ['sort', `sort -o $D/sort-o $D/in.txt`, 'sort-o'],
  ['sort', `sort --out=$D/sort-out $D/in.txt`, 'sort-out'],
  ['file', `file -C -m $D/magic`, 'magic.mgc'],
  ['find', `find $D -maxdepth 0 -fprint $D/find-fprint`, 'find-fprint'],
  ['find', `find $D -maxdepth 0 -fls $D/find-fls`, 'find-fls'],
  ['find', `find $D -maxdepth 0 -fprintf $D/find-fprintf x`, 'find-fprintf'],
  ['sed', `sed -n 'w $D/sed-w' $D/in.txt`, 'sed-w'],
  ['sed', `sed -n '1e touch $D/sed-e' $D/in.txt`, 'sed-e'],
  ['sed', `sed -i.bak s/a/b/ $D/in2.txt`, 'in2.txt.bak'],
  ['sed', `sed --in-place=.orig s/a/b/ $D/in2.txt`, 'in2.txt.orig'],
  ['tar', `tar -xf $D/x.tar --to-command='touch $D/tar-to-command'`, 'tar-to-command'],
  ['tar', `tar -tf $D/x.tar --checkpoint=1 --checkpoint-action=exec='touch $D/tar-checkpoint'`, 'tar-checkpoint'],
  ['tar', `tar -xf $D/x.tar -C $D/tx`, 'tx/in.txt'],
  ['tar', `tar xf $D/x.tar -C $D/ty`, 'ty/in.txt'],
  ['uniq', `uniq $D/in.txt $D/uniq-out`, 'uniq-out'],
  ['xxd', `xxd $D/in.txt $D/xxd-out`, 'xxd-out'],
  ['xargs', `echo -o$D/xargs-sort $D/in.txt | xargs sort`, 'xargs-sort'],
  ['find', `find $D/in.txt -exec sort -o $D/find-exec-sort {} +`, 'find-exec-sort'],
];

describe('options that write or run code are not allowed by linux-readonly (proven on real programs)', () => {
  test.each(writesUnderReadonly)('%s: %s', (program, template, marker) => {
    if (!have(program)) return;
    const command = template.replaceAll('$D', dir);
    runInBash(command);
    expect(existsSync(join(dir, marker)), `the attack ${command} must work for real`).toBe(true);
    const { verdict, reasons } = evaluateCommand(command, readonly);
    expect(verdict, JSON.stringify(reasons)).not.toBe('allow');
  });
});

/** Wrappers and loaders: proven to run their inner command, then the wipe they carry must be denied. */
const wrappers: Array<[string, string]> = [
  ['ld-linux', '/lib64/ld-linux-x86-64.so.2 /usr/bin/touch'],
  ['ld-linux', '/lib64/ld-linux-x86-64.so.2 --library-path /lib /bin/touch'],
  ['setpriv', 'setpriv --reuid=0 touch'],
  ['setpriv', 'setpriv touch'],
  ['prlimit', 'prlimit --nofile=1024 touch'],
  ['prlimit', 'prlimit -n1024 touch'],
  ['logsave', 'logsave /dev/null touch'],
  ['logsave', 'logsave -a /dev/null touch'],
  ['capsh', 'capsh -- -c "touch"'],
  ['fakeroot', 'fakeroot touch'],
  ['fakeroot', 'fakeroot -- touch'],
  ['valgrind', 'valgrind -q --log-file=/dev/null touch'],
  ['strace', 'strace -f -o /dev/null touch'],
  ['gdb', 'gdb -q -batch -ex run --args touch'],
  ['perf', 'perf stat -o /dev/null touch'],
  ['perf', 'perf record -q -o /dev/null touch'],
  ['start-stop-daemon', 'start-stop-daemon --start --exec /usr/bin/touch --'],
  ['start-stop-daemon', 'start-stop-daemon -S -x /usr/bin/touch --'],
  ['flock', 'flock /tmp/letkite-attack.lock touch'],
  ['setarch', 'setarch x86_64 -R touch'],
  ['setarch', 'linux64 touch'],
  ['nohup', 'nohup touch'],
  ['timeout', 'timeout -s KILL 5 touch'],
  ['env', 'env -S touch'],
  ['env', 'env -i -u HOME touch'],
  ['xargs', 'echo x | xargs -I{} touch'],
  ['nice', 'nice -n 5 touch'],
  ['taskset', 'taskset -c 0 touch'],
  ['tmux', 'tmux -L letkite-attack new-session -d touch'],
  ['sudo', 'sudo -n touch'],
  ['bash', '/proc/self/exe -c touch'],
  ['bash', 'exec -a x touch'],
  ['chrt', 'chrt -o 0 touch'],
  ['ionice', 'ionice -c 3 touch'],
  ['stdbuf', 'stdbuf -oL touch'],
  ['script', 'script -qc touch /dev/null'],
  ['unshare', 'unshare -r touch'],
  ['systemd-run', 'systemd-run --user --scope touch'],
];

describe('wrappers and loaders: the wipe inside is denied (each wrapper proven to run its command)', () => {
  test.each(wrappers)('%s: %s', async (program, wrapper) => {
    if (!have(program)) return;
    const marker = join(dir, `wrapped-${Math.random().toString(36).slice(2)}`);
    const wrapped = /-c "touch"|-c touch|-qc touch/.test(wrapper)
      ? wrapper.replace(/"touch"|touch/, JSON.stringify(`touch ${marker}`))
      : wrapper.endsWith('--')
        ? `${wrapper} ${marker}`
        : wrapper.replace(/touch$/, `touch ${marker}`);
    runInBash(`${wrapped}; sleep 0.3`);
    if (program === 'tmux') {
      for (let i = 0; i < 20 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 100));
      runInBash('tmux -L letkite-attack kill-server');
    }
    if (program === 'systemd-run' && !existsSync(marker)) return; // no user systemd on this machine
    if (program === 'sudo' && !existsSync(marker)) return;
    expect(existsSync(marker), `${wrapped} must run its inner command for real`).toBe(true);
    const wipe = /-c "touch"|-c touch|-qc touch/.test(wrapper)
      ? wrapper.replace(/"touch"|touch/, "'rm -rf /'")
      : wrapper.endsWith('--')
        ? `${wrapper.replace(/touch/, 'rm')} -rf /`
        : wrapper.replace(/touch$/, wrapper.includes('/bin/touch') ? 'rm -rf /' : 'rm -rf /');
    const spelled =
      wrapper === 'env -S touch'
        ? "env -S 'rm -rf /'"
        : wipe.replace('/usr/bin/touch', '/bin/rm').replace('/bin/touch', '/bin/rm');
    const { verdict, reasons } = evaluateCommand(spelled, readonlyOpen);
    expect(verdict, `${spelled}: ${JSON.stringify(reasons)}`).toBe('deny');
  });
});

describe('an unknown wrapper is opaque: its arguments are judged as a command', () => {
  test('a program the rules do not know, carrying a wipe', () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'mywrap'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
    const marker = join(dir, 'mywrap-ran');
    runInBash(`${join(bin, 'mywrap')} touch ${marker}`);
    expect(existsSync(marker)).toBe(true);
    expect(evaluateCommand('mywrap --level 3 rm -rf /', readonlyOpen).verdict).toBe('deny');
    expect(evaluateCommand('mywrap /bin/rm -rf /', readonlyOpen).verdict).toBe('deny');
    const opaque = evaluateCommand('mywrap sh -c "rm -rf /tmp/x"', readonlyOpen);
    expect(atLeast(opaque.verdict, 'approve')).toBe(true);
  });
});

/**
 * Wipes spelled with other tools: each is run for real against a throwaway tree (and must delete or destroy it),
 * then the same command aimed at a system directory must be denied whatever the policy.
 */
const wipes: Array<[string, string, string]> = [
  ['rsync', 'mkdir -p $D/empty && rsync -a --delete $D/empty/ $T/', 'rsync -a --delete /tmp/empty/ /etc/'],
  ['rsync', 'mkdir -p $D/empty && rsync -r --delete-after $D/empty/ $T/', 'rsync -r --delete-after empty/ /usr'],
  ['tar', 'tar --remove-files -cf $D/wipe.tar -C $T .', 'tar --remove-files -cf /tmp/x.tar /home'],
  ['zip', 'cd $T && zip -qrm $D/wipe.zip .', 'zip -rm /tmp/x.zip /var'],
  ['find', 'find $T -type f -exec rm -f {} +', 'find /etc -type f -exec rm -f {} +'],
  ['shred', 'find $T -type f -exec shred -u {} +', 'find / -type f -exec shred -u {} +'],
  ['git', 'cd $T && git init -q . && git clean -ffdxq', 'git -C / clean -ffdx'],
];

describe('equivalent wipes are denied (each proven to destroy a throwaway tree)', () => {
  const open = CommandPolicy.parse({ default: 'allow' });
  test.each(wipes)('%s: %s', (program, template, wipe) => {
    if (!have(program)) return;
    const target = mkdtempSync(join(dir, 'victim-'));
    mkdirSync(join(target, 'sub'));
    writeFileSync(join(target, 'sub', 'data.txt'), 'precious\n');
    runInBash(template.replaceAll('$D', dir).replaceAll('$T', target));
    expect(existsSync(join(target, 'sub', 'data.txt')), `${template} must destroy the tree for real`).toBe(false);
    const { verdict, reasons } = evaluateCommand(wipe, open);
    expect(verdict, JSON.stringify(reasons)).toBe('deny');
  });
});
