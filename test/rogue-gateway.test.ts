/**
 * Issue #10, "a rogue-gateway suite that proves it": ONE realistic hardened agent (a sandboxed shell ceiling with
 * command rules, denied paths, a files list and pinned approvers) and one allowlisted agent, both real processes,
 * driven by a COMPROMISED gateway (`RogueGateway.start()`: it holds the pinned identity key, so the handshake
 * succeeds) through every class of attack. Each attack asserts its refusal code AND its side effect on disk: a
 * marker that must not exist, a file that must be unchanged, a secret that must appear in no chunk or result.
 *
 * The suites that go deep on one class live elsewhere (gateway-identity, env-cwd-git, keys-out-of-reach,
 * sandbox-escape, approvals-rogue); this one is the sweep over all of them against one machine.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { encodeDataFrame, MAX_FRAME_BYTES, MAX_TRANSFER_ENTRIES } from '@letkite/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ManifestDigest } from '../apps/agent/src/transfers/manifest';
import { bindingFor, TestPasskey } from './support/passkey-signer';
import { CliProcess, removeDir, repoRoot, tempDir, waitFor } from './support/processes';
import { type RogueAnswer, RogueGateway, type RogueOptions } from './support/rogue-gateway';

const MACHINE = 'mch_rogue_sweep';
const SECRET = `secret-${randomBytes(8).toString('hex')}`;
const SECRET_FILE_TEXT = `file-secret-${randomBytes(8).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const unique = () => randomBytes(5).toString('hex');

const codeOf = (a: RogueAnswer) => (a.ok ? 'ok' : (a.error?.code ?? 'none'));
/** Everything an answer carries, to search for a leaked secret. */
const everything = (a: RogueAnswer) => JSON.stringify(a);

/** The policy a compromised gateway claims for every call: everything wide open. */
const widest = {
  name: 'evil',
  shell: 'full',
  files: [{ path: '*', access: 'rw' }],
  commands: { mode: 'shell', default: 'allow' },
};
const wide = { policy: widest, approved: true, confirm: true, actor: 'mallory' };
const run = { timeout_ms: 10_000, max_output_bytes: 100_000 };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  });
}

/** A real agent process whose state points at a rogue gateway that holds its pinned key. */
async function rogueAgent(name: string, ceiling: string, options: RogueOptions = {}) {
  const rogue = await RogueGateway.start(options);
  const stateDir = tempDir(`rogue-${name}-state`);
  const ceilingDir = tempDir(`rogue-${name}-ceiling`);
  writeFileSync(join(stateDir, 'agent.json'), JSON.stringify(rogue.agentState(MACHINE)), { mode: 0o600 });
  const ceilingPath = join(ceilingDir, 'ceiling.toml');
  writeFileSync(ceilingPath, ceiling, { mode: 0o644 });
  const agent = new CliProcess(['agent', 'run', '--state-dir', stateDir, '--ceiling', ceilingPath]);
  await rogue.connected();
  return {
    rogue,
    agent,
    stateDir,
    ceilingPath,
    async dispose() {
      await agent.stop();
      await rogue.close();
      removeDir(stateDir);
      removeDir(ceilingDir);
    },
  };
}

/** Replaces a ceiling the way an editor does and waits until the agent reported the new one. */
async function rewriteCeiling(env: Awaited<ReturnType<typeof rogueAgent>>, text: string): Promise<void> {
  const before = env.rogue.reports.length;
  writeFileSync(`${env.ceilingPath}.new`, text, { mode: 0o644 });
  execFileSync('mv', [`${env.ceilingPath}.new`, env.ceilingPath]);
  await waitFor('the agent to report its new ceiling', () => env.rogue.reports.length > before);
}

describe('a compromised gateway against one hardened sandboxed machine', () => {
  const petra = TestPasskey.create('ES256');
  const stranger = TestPasskey.create('ES256');
  let env: Awaited<ReturnType<typeof rogueAgent>>;
  let work: string;
  let roDir: string;
  let secretDir: string;
  let secretFile: string;
  let roFile: string;
  let victim: string;
  let ceilingText: (terminals: boolean) => string;

  beforeAll(async () => {
    work = tempDir('rogue-sweep-work');
    roDir = tempDir('rogue-sweep-ro');
    secretDir = join(work, 'secret');
    secretFile = join(work, 'secret-file.txt');
    roFile = join(roDir, 'keep.txt');
    victim = join(work, 'victim.txt');
    mkdirSync(secretDir);
    writeFileSync(join(secretDir, 'token.txt'), `${SECRET}\n`);
    writeFileSync(secretFile, `${SECRET_FILE_TEXT}\n`);
    writeFileSync(roFile, 'original\n');
    writeFileSync(victim, 'victim\n');
    mkdirSync(join(work, 'sub'));
    writeFileSync(join(work, 'sub', 'plain.txt'), 'plain\n');
    symlinkSync(secretDir, join(work, 'link-to-secret'));
    symlinkSync(secretFile, join(work, 'link-to-secret-file'));
    symlinkSync('../secret', join(work, 'sub', 'up-to-secret'));
    // The whole work tree is a repository whose history holds both secrets; the secret dir is one of its own too.
    git(work, 'init', '-q');
    git(work, 'add', '-A');
    git(work, 'commit', '-qm', 'one');
    writeFileSync(secretFile, `${SECRET_FILE_TEXT}\nchanged ${SECRET_FILE_TEXT}\n`);
    writeFileSync(join(secretDir, 'token.txt'), `${SECRET}\nchanged ${SECRET}\n`);
    ceilingText = (terminals: boolean) =>
      [
        'version = 1',
        'shell = "sandboxed"',
        'run_as = "root"',
        `files = [{ path = "${work}", access = "rw" }, { path = "*", access = "ro" }]`,
        `deny = ["${secretDir}", "${secretFile}"]`,
        `terminals = ${terminals}`,
        'transfers = true',
        'rules = [ { match = "rm *", verdict = "deny" }, { match = "touch *", verdict = "approve" } ]',
        `approvers = [ ${petra.approverToml('Petra')} ]`,
        '',
      ].join('\n');
    env = await rogueAgent('sweep', ceilingText(true));
  });

  afterAll(async () => {
    await env?.dispose();
    removeDir(work);
    removeDir(roDir);
  });

  /** Nothing the attack could have done happened: the secrets are intact and the victim and ro file unchanged. */
  function untouched(): void {
    expect(readFileSync(victim, 'utf8')).toBe('victim\n');
    expect(readFileSync(roFile, 'utf8')).toBe('original\n');
    expect(readFileSync(join(secretDir, 'token.txt'), 'utf8')).toContain(SECRET);
    expect(readFileSync(secretFile, 'utf8')).toContain(SECRET_FILE_TEXT);
  }

  function noSecretIn(a: RogueAnswer): void {
    expect(everything(a)).not.toContain(SECRET);
    expect(everything(a)).not.toContain(SECRET_FILE_TEXT);
  }

  describe('forged approvals', () => {
    const execParams = (command: string) => ({ command, ...run });

    test('approved: true does not pass a ceiling approve rule, for exec, job_start and shell_run', async () => {
      const marker = join(work, `approved-${unique()}`);
      const exec = await env.rogue.request('exec', execParams(`touch ${marker}`), wide);
      expect(`${codeOf(exec)}:${exec.error?.details?.reason}`).toBe('blocked_by_ceiling:approval_not_verified');
      const job = await env.rogue.request('job_start', { command: `touch ${marker}`, timeout_ms: 5000 }, wide);
      expect(codeOf(job)).toBe('blocked_by_ceiling');
      const shell = await env.rogue.request('shell_run', execParams(`touch ${marker}`), wide);
      expect(codeOf(shell)).toBe('blocked_by_ceiling');
      await sleep(300);
      expect(existsSync(marker)).toBe(false);
    });

    test('a fabricated, another command’s or a replayed proof runs nothing; the real one runs once', async () => {
      const marker = join(work, `proof-${unique()}`);
      const params = execParams(`touch ${marker}`);
      const bound = (p: unknown) => bindingFor({ machineId: MACHINE, op: 'exec', params: p, policy: widest });
      const forged: [string, unknown][] = [
        ['an unpinned key', stranger.prove(bound(params))],
        ['another key under the pinned id', stranger.prove(bound(params), { credentialId: petra.credentialId })],
        ['the pinned key over another command', petra.prove(bound(execParams(`touch ${marker}-other`)))],
      ];
      for (const [what, proof] of forged) {
        const r = await env.rogue.request('exec', params, { ...wide, approval_proof: proof });
        expect(`${what}: ${codeOf(r)}`).toBe(`${what}: blocked_by_ceiling`);
      }
      expect(existsSync(marker)).toBe(false);
      // The honest proof works (so the refusals above are not a machine that refuses everything) ...
      const proof = petra.prove(bound(params));
      const first = await env.rogue.request('exec', params, { ...wide, approval_proof: proof });
      expect(codeOf(first), everything(first)).toBe('ok');
      expect(existsSync(marker)).toBe(true);
      // ... once: replayed, it runs nothing (the marker's mtime would move).
      removeDir(marker);
      const again = await env.rogue.request('exec', params, { ...wide, approval_proof: proof });
      expect(`${codeOf(again)}:${again.error?.details?.reason}`).toBe('blocked_by_ceiling:replayed');
      expect(existsSync(marker)).toBe(false);
    });
  });

  describe('ceiling rules through opaque spellings', () => {
    const spellings = (target: string, m: string) => [
      `$(echo rm) ${target}`,
      `r\\m ${target}`,
      `'r'm ${target}`,
      `/lib64/ld-linux-x86-64.so.2 /bin/rm ${target}`,
      `env -S 'rm ${target}'`,
      `x='rm ${target}'; bash -c "$x"`,
      `r\\\nm ${target}`,
      `bash <<EOF\nrm ${target}\nEOF`,
      `bash <<'EOF'\nrm ${target}\nEOF`,
      `sh -c 'rm ${target}'`,
      `command rm ${target}`,
      `find ${target} -delete`,
      `a=r; b=m; $a$b ${target}`,
      `eval "r""m ${target}"`,
      `\`echo rm\` ${target}`,
      `$(printf '\\x72\\x6d') ${target}`,
      `{ rm ${target}; }`,
      `(rm ${target})`,
      `true && rm ${target}`,
      `echo ok; rm ${target} # ${m}`,
    ];

    test('the ceiling deny rule "rm *" holds against every spelling (exec, job_start, shell_run)', async () => {
      const failures: string[] = [];
      for (const command of spellings(victim, 'x')) {
        for (const op of ['exec', 'shell_run'] as const) {
          const r = await env.rogue.request(op, { command, ...run }, wide);
          if (codeOf(r) !== 'blocked_by_ceiling' || !existsSync(victim)) {
            failures.push(`${op} ${JSON.stringify(command)} -> ${codeOf(r)} (victim ${existsSync(victim)})`);
          }
          if (!existsSync(victim)) writeFileSync(victim, 'victim\n');
        }
      }
      // The same through argv (execve, no shell), and a wrapper taking its arguments from stdin.
      for (const params of [
        { argv: ['rm', victim] },
        { argv: ['/bin/rm', victim] },
        { argv: ['/usr/bin/env', 'rm', victim] },
        { argv: ['bash', '-c', `rm ${victim}`] },
        { argv: ['xargs', 'rm'], stdin: `${victim}\n` },
        // A shell reading its script from the call's stdin runs what the command line never names.
        { argv: ['bash'], stdin: `rm ${victim}\n` },
        { command: 'bash -s', stdin: `rm ${victim}\n` },
        { command: 'sh', stdin: `rm ${victim}\n` },
        { argv: ['/usr/bin/env', 'dash'], stdin: `r\\m ${victim}\n` },
      ]) {
        const r = await env.rogue.request('exec', { ...params, ...run }, wide);
        if (codeOf(r) !== 'blocked_by_ceiling' || !existsSync(victim)) {
          failures.push(`exec ${JSON.stringify(params)} -> ${codeOf(r)} (victim ${existsSync(victim)})`);
        }
        if (!existsSync(victim)) writeFileSync(victim, 'victim\n');
      }
      // Code an interpreter reads from stdin cannot be judged: refused here (the machine pins approvers).
      for (const params of [
        { argv: ['python3'], stdin: `import os; os.remove(${JSON.stringify(victim)})\n` },
        { command: 'perl', stdin: `unlink ${JSON.stringify(victim)};\n` },
      ]) {
        const r = await env.rogue.request('exec', { ...params, ...run }, wide);
        if (r.ok || !existsSync(victim)) {
          failures.push(`exec ${JSON.stringify(params)} -> ${codeOf(r)} (victim ${existsSync(victim)})`);
        }
        if (!existsSync(victim)) writeFileSync(victim, 'victim\n');
      }
      const job = await env.rogue.request('job_start', { command: `$(echo rm) ${victim}`, timeout_ms: 5000 }, wide);
      if (codeOf(job) !== 'blocked_by_ceiling') failures.push(`job_start -> ${codeOf(job)}`);
      await sleep(300);
      expect(failures).toEqual([]);
      untouched();
    });

    test('the ceiling approve rule "touch *" holds against opaque spellings without a verified proof', async () => {
      const marker = join(work, `touch-${unique()}`);
      const failures: string[] = [];
      for (const command of [
        `$(echo touch) ${marker}`,
        `t\\ouch ${marker}`,
        `env -S 'touch ${marker}'`,
        `x='touch ${marker}'; bash -c "$x"`,
        `bash <<EOF\ntouch ${marker}\nEOF`,
        `/lib64/ld-linux-x86-64.so.2 /usr/bin/touch ${marker}`,
      ]) {
        const r = await env.rogue.request('exec', { command, ...run }, wide);
        if (codeOf(r) !== 'blocked_by_ceiling') failures.push(`${JSON.stringify(command)} -> ${codeOf(r)}`);
      }
      const argv = await env.rogue.request('exec', { argv: ['touch', marker], ...run }, wide);
      if (codeOf(argv) !== 'blocked_by_ceiling') failures.push(`argv -> ${codeOf(argv)}`);
      await sleep(300);
      expect(failures).toEqual([]);
      expect(existsSync(marker)).toBe(false);
    });
  });

  describe('a request policy wider than the ceiling, or one the agent cannot understand', () => {
    test('shell "full" still runs sandboxed: no denied read, no write outside the rw paths', async () => {
      const r = await env.rogue.request(
        'exec',
        {
          command: `cat ${secretFile} ${join(secretDir, 'token.txt')}; echo changed > ${roFile}; ls ${secretDir}; echo done`,
          ...run,
        },
        wide,
      );
      expect(codeOf(r), everything(r)).toBe('ok');
      expect(r.chunks.map((c) => c.data).join('')).toContain('done');
      noSecretIn(r);
      untouched();
    });

    test('files "*" rw does not open the ceiling’s read-only or denied paths to the file tools', async () => {
      const write = await env.rogue.request('write_file', { path: roFile, content: 'changed' }, wide);
      expect(codeOf(write)).toBe('blocked_by_ceiling');
      const read = await env.rogue.request('read_file', { path: secretFile }, wide);
      expect(codeOf(read)).toBe('not_found');
      noSecretIn(read);
      untouched();
    });

    test('an unknown or garbled policy grants nothing', async () => {
      const marker = join(work, `garbled-${unique()}`);
      const policies: unknown[] = [
        'superuser',
        { name: 'x', shell: 'root' },
        { name: 'x', shell: 'full', files: 'everything' },
        { ...widest, commands: { mode: 'anything-goes' } },
        42,
        null,
      ];
      for (const policy of policies) {
        const r = await env.rogue.request('exec', { command: `echo x > ${marker}`, ...run }, { ...wide, policy });
        expect(`${JSON.stringify(policy)}: ${codeOf(r)}`).toBe(`${JSON.stringify(policy)}: blocked_by_policy`);
        const w = await env.rogue.request('write_file', { path: marker, content: 'x' }, { ...wide, policy });
        expect(codeOf(w)).toBe('blocked_by_policy');
      }
      await sleep(200);
      expect(existsSync(marker)).toBe(false);
    });
  });

  describe('env and cwd (env-cwd-git.test.ts goes deep)', () => {
    test('a cwd in a denied directory, by any spelling, is refused for exec, job_start, shell_run and terminals', async () => {
      for (const cwd of [secretDir, join(work, 'link-to-secret'), `/proc/self/root${secretDir}`, `${work}//secret/`]) {
        const r = await env.rogue.request('exec', { command: 'cat token.txt', cwd, ...run }, wide);
        expect(`${cwd}: ${codeOf(r) === 'ok' ? 'ran' : 'refused'}`).toBe(`${cwd}: refused`);
        noSecretIn(r);
        const j = await env.rogue.request('job_start', { command: 'cat token.txt', cwd, timeout_ms: 5000 }, wide);
        expect(codeOf(j)).not.toBe('ok');
      }
      const t = await env.rogue.request('terminal_open', { cols: 80, rows: 24, cwd: secretDir }, wide);
      expect(codeOf(t)).not.toBe('ok');
    });

    test('loader and shell start-up variables are refused, and the script they name never runs', async () => {
      const marker = join(work, `bashenv-${unique()}`);
      const script = join(work, `bashenv-${unique()}.sh`);
      writeFileSync(script, `echo ran > ${marker}\n`);
      for (const vars of [{ BASH_ENV: script }, { ENV: script }, { LD_PRELOAD: '/nonexistent.so' }, { PATH: work }]) {
        const r = await env.rogue.request('exec', { command: 'bash -c true', env: vars, ...run }, wide);
        expect(`${Object.keys(vars)[0]}: ${codeOf(r)}`).not.toBe(`${Object.keys(vars)[0]}: ok`);
      }
      await sleep(200);
      expect(existsSync(marker)).toBe(false);
    });
  });

  describe('paths: every spelling of a denied path looks missing, for every file tool', () => {
    let agentPid = 0;
    beforeAll(() => {
      agentPid = env.agent.child.pid ?? 0;
    });

    const spellingsOf = (target: string) => {
      const rel = relative(repoRoot, target);
      return [
        target,
        target.replaceAll('/', '//'),
        `${target}/`,
        `${target}/.`,
        join(work, 'sub', '..', relative(work, target)),
        `${work}/sub/../${relative(work, target)}`,
        `/proc/self/root${target}`,
        `/proc/thread-self/root${target}`,
        `/proc/self/cwd/${rel}`,
        `/proc/${agentPid}/root${target}`,
        `/proc/${agentPid}/cwd/${rel}`,
      ];
    };

    test('read_file, list_dir, git_status and git_diff: nothing of the secrets comes back', async () => {
      const failures: string[] = [];
      const attempts: [string, string][] = [];
      for (const p of spellingsOf(join(secretDir, 'token.txt'))) attempts.push(['read_file', p]);
      for (const p of spellingsOf(secretFile)) attempts.push(['read_file', p]);
      attempts.push(['read_file', join(work, 'link-to-secret', 'token.txt')]);
      attempts.push(['read_file', join(work, 'link-to-secret-file')]);
      attempts.push(['read_file', join(work, 'sub', 'up-to-secret', 'token.txt')]);
      for (const p of spellingsOf(secretDir)) {
        attempts.push(['list_dir', p]);
        attempts.push(['git_status', p]);
        attempts.push(['git_diff', p]);
      }
      attempts.push(['list_dir', join(work, 'link-to-secret')]);
      attempts.push(['list_dir', join(work, 'sub', 'up-to-secret')]);
      for (const [op, path] of attempts) {
        const r = await env.rogue.request(op, { path }, wide);
        const leaked = everything(r).includes(SECRET) || everything(r).includes(SECRET_FILE_TEXT);
        const listed = op === 'list_dir' && everything(r).includes('token.txt');
        if (r.ok || leaked || listed) failures.push(`${op} ${path} -> ${codeOf(r)}${leaked ? ' LEAKED' : ''}`);
      }
      expect(failures).toEqual([]);
    });

    test('the repository around them never shows the denied files (git_status, git_diff, list_dir)', async () => {
      const status = await env.rogue.request('git_status', { path: work }, wide);
      expect(codeOf(status), everything(status)).toBe('ok');
      expect(everything(status)).not.toContain('secret-file.txt');
      expect(everything(status)).not.toContain('secret/token.txt');
      const failures: string[] = [];
      for (const params of [
        { path: work },
        { path: work, ref: 'HEAD~0' },
        { path: work, paths: ['secret-file.txt'] },
        { path: work, paths: [secretFile] },
        { path: work, paths: ['./secret//token.txt'] },
        { path: work, paths: ['sub/../secret-file.txt'] },
        { path: work, paths: [':(glob)**'] },
        { path: work, paths: [':(top)secret-file.txt'] },
        { path: work, paths: ['*'] },
        { path: work, paths: ['secret*'] },
        { path: work, staged: true },
      ]) {
        const r = await env.rogue.request('git_diff', params, wide);
        if (everything(r).includes(SECRET) || everything(r).includes(SECRET_FILE_TEXT)) {
          failures.push(`git_diff ${JSON.stringify(params)} LEAKED`);
        }
      }
      const list = await env.rogue.request('list_dir', { path: work, depth: 3, include_hidden: true }, wide);
      expect(codeOf(list)).toBe('ok');
      expect(everything(list)).not.toContain('token.txt');
      expect(everything(list)).not.toContain('secret-file.txt');
      expect(failures).toEqual([]);
    });

    test('write_file and delete_path through every spelling change nothing', async () => {
      const failures: string[] = [];
      const targets = [
        ...spellingsOf(join(secretDir, 'token.txt')),
        ...spellingsOf(secretFile),
        join(work, 'link-to-secret', 'token.txt'),
        join(work, 'link-to-secret', 'new.txt'),
        join(work, 'link-to-secret-file'),
        join(work, 'sub', 'up-to-secret', 'new.txt'),
        `/proc/self/root${roFile}`,
        `/proc/self/cwd/${relative(repoRoot, roFile)}`,
        `${roDir}//keep.txt`,
      ];
      for (const path of targets) {
        const w = await env.rogue.request('write_file', { path, content: 'pwned' }, wide);
        if (w.ok) failures.push(`write_file ${path} -> ok`);
      }
      for (const path of [...targets, ...spellingsOf(secretDir), join(work, 'link-to-secret/')]) {
        const d = await env.rogue.request('delete_path', { path, recursive: true }, wide);
        // Deleting a link itself (a name in the rw tree, not what it points at) is allowed, with or without a
        // trailing slash: the path is normalised lexically, so "link/" is the link, never the directory behind it.
        const linkItself = [join(work, 'link-to-secret-file'), join(work, 'link-to-secret/')].includes(path);
        if (d.ok && !linkItself) failures.push(`delete_path ${path} -> ok`);
      }
      expect(failures).toEqual([]);
      untouched();
      expect(readdirSync(secretDir)).toEqual(['token.txt']);
      expect(existsSync(join(secretDir, 'new.txt'))).toBe(false);
      if (!existsSync(join(work, 'link-to-secret-file'))) symlinkSync(secretFile, join(work, 'link-to-secret-file'));
      if (!existsSync(join(work, 'link-to-secret'))) symlinkSync(secretDir, join(work, 'link-to-secret'));
    });

    test('the agent’s own process (/proc/<pid>/environ, fd, mem) is out of reach', async () => {
      for (const path of [
        `/proc/${agentPid}/environ`,
        '/proc/self/environ',
        '/proc/thread-self/environ',
        `/proc/${agentPid}/cmdline`,
        '/proc/self/fd/0',
      ]) {
        const r = await env.rogue.request('read_file', { path }, wide);
        expect(`${path}: ${codeOf(r)}`).not.toBe(`${path}: ok`);
      }
      const l = await env.rogue.request('list_dir', { path: `/proc/${agentPid}/fd` }, wide);
      expect(codeOf(l)).not.toBe('ok');
    });

    test('hard links: the sandbox cannot link a denied file out; one the administrator made is a file of its own', async () => {
      // A sandboxed command cannot see the denied file, so it cannot link it into the rw tree.
      const out = join(work, `hl-${unique()}`);
      const r = await env.rogue.request(
        'exec',
        { command: `ln ${secretFile} ${out}; cat ${out}; echo end`, ...run },
        wide,
      );
      expect(codeOf(r)).toBe('ok');
      noSecretIn(r);
      if (existsSync(out)) expect(readFileSync(out, 'utf8')).not.toContain(SECRET_FILE_TEXT);
      // Nor can the file tools: no op makes a hard link to a path the caller names.
      const admin = join(work, `admin-link-${unique()}`);
      linkSync(secretFile, admin);
      expect(statSync(admin).nlink).toBeGreaterThan(1);
      // What holds for a link the administrator made: the deny list names paths, so the other name is readable
      // by design (documented in apps/agent/src/files/README.md); we only pin that here so a change is seen.
      const read = await env.rogue.request('read_file', { path: admin }, wide);
      expect(codeOf(read)).toBe('ok');
      // Writing that other name replaces the name (a new file renamed over it), never the denied file's content.
      const write = await env.rogue.request('write_file', { path: admin, content: 'replaced' }, wide);
      expect(codeOf(write)).toBe('ok');
      expect(readFileSync(admin, 'utf8')).toBe('replaced');
      removeDir(admin);
      untouched();
    });
  });

  describe('jobs, shell sessions and terminals', () => {
    test('another actor’s job cannot be read or stopped; the job keeps running', async () => {
      const marker = join(work, `job-${unique()}`);
      const start = await env.rogue.request(
        'job_start',
        { command: `sleep 2; echo finished > ${marker}`, timeout_ms: 20_000 },
        { policy: widest, actor: 'alice' },
      );
      expect(codeOf(start), everything(start)).toBe('ok');
      const jobId = (start.result as { job_id: string }).job_id;
      const asMallory = { policy: widest, actor: 'mallory' };
      expect(codeOf(await env.rogue.request('job_output', { job_id: jobId }, asMallory))).toBe('not_found');
      expect(codeOf(await env.rogue.request('job_stop', { job_id: jobId }, asMallory))).toBe('not_found');
      expect(codeOf(await env.rogue.request('job_status', { job_id: jobId }, asMallory))).toBe('not_found');
      expect(codeOf(await env.rogue.request('job_stop', { job_id: 'job_../../etc' }, asMallory))).not.toBe('ok');
      await waitFor('the job to finish', () => existsSync(marker), 10_000);
    });

    test('a job reads no secret and writes nothing outside its rw paths', async () => {
      const start = await env.rogue.request(
        'job_start',
        { command: `cat ${secretFile}; echo x > ${roFile}; echo job-done`, timeout_ms: 10_000 },
        wide,
      );
      expect(codeOf(start)).toBe('ok');
      const jobId = (start.result as { job_id: string }).job_id;
      let out: RogueAnswer = start;
      await waitFor('the job output', async () => {
        out = await env.rogue.request('job_output', { job_id: jobId }, wide);
        return everything(out).includes('job-done');
      });
      noSecretIn(out);
      untouched();
    });

    test('another actor’s shell session cannot be used', async () => {
      const first = await env.rogue.request(
        'shell_run',
        { command: 'cd /tmp; echo hi', ...run },
        {
          policy: widest,
          actor: 'alice',
        },
      );
      expect(codeOf(first), everything(first)).toBe('ok');
      const sessionId = (first.result as { session_id: string }).session_id;
      const r = await env.rogue.request('shell_run', { session_id: sessionId, command: 'echo hijacked', ...run }, wide);
      expect(codeOf(r)).toBe('not_found');
    });

    test('a ceiling edited to shell = "off", transfers = false refuses those tools, open sessions included', async () => {
      const marker = join(work, `off-${unique()}`);
      // A shell session and a terminal opened before the edit ...
      const session = await env.rogue.request('shell_run', { command: 'echo open', ...run }, wide);
      expect(codeOf(session), everything(session)).toBe('ok');
      const sessionId = (session.result as { session_id: string }).session_id;
      const terminal = await env.rogue.request('terminal_open', { cols: 80, rows: 24 }, wide);
      expect(codeOf(terminal), everything(terminal)).toBe('ok');
      const terminalId = (terminal.result as { terminal_id: string }).terminal_id;
      await rewriteCeiling(
        env,
        ceilingText(true)
          .replace('shell = "sandboxed"', 'shell = "off"')
          .replace('transfers = true', 'transfers = false'),
      );
      try {
        for (const [op, params] of [
          ['exec', { command: `echo x > ${marker}`, ...run }],
          ['shell_run', { command: `echo x > ${marker}`, ...run }],
          ['shell_run', { session_id: sessionId, command: `echo x > ${marker}`, ...run }],
          ['job_start', { command: `echo x > ${marker}`, timeout_ms: 5000 }],
          ['terminal_open', { cols: 80, rows: 24 }],
          ['terminal_send', { terminal_id: terminalId, text: `echo x > ${marker}`, submit: true }],
          ['transfer_send', { path: victim }],
          ['transfer_receive', { path: marker }],
        ] as const) {
          const r = await env.rogue.request(op, params, wide);
          expect(`${op}: ${codeOf(r)}`).toBe(`${op}: blocked_by_ceiling`);
        }
      } finally {
        await rewriteCeiling(env, ceilingText(true));
      }
      await sleep(200);
      expect(existsSync(marker)).toBe(false);
    });

    test('terminals = false refuses terminals; with terminals on, the sandbox bounds what is typed', async () => {
      await rewriteCeiling(env, ceilingText(false));
      try {
        const off = await env.rogue.request('terminal_open', { cols: 80, rows: 24 }, wide);
        expect(codeOf(off)).toBe('blocked_by_ceiling');
      } finally {
        await rewriteCeiling(env, ceilingText(true));
      }
      const open = await env.rogue.request('terminal_open', { cols: 100, rows: 30 }, wide);
      expect(codeOf(open), everything(open)).toBe('ok');
      const id = (open.result as { terminal_id: string }).terminal_id;
      // The ceiling's deny rule is a guardrail of the command tools; what holds in a terminal is the sandbox.
      const sent = await env.rogue.request(
        'terminal_send',
        { terminal_id: id, text: `cat ${secretFile}; rm -f ${roFile}; echo term-$((6*7))`, submit: true },
        wide,
      );
      expect(codeOf(sent)).toBe('ok');
      let text: RogueAnswer = sent;
      await waitFor('the terminal to answer', async () => {
        text = await env.rogue.request('terminal_text', { terminal_id: id, max_wait_ms: 500 }, wide);
        return everything(text).includes('term-42');
      });
      noSecretIn(text);
      const other = await env.rogue.request('terminal_text', { terminal_id: id }, { policy: widest, actor: 'eve' });
      expect(codeOf(other)).toBe('not_found');
      await env.rogue.request('terminal_close', { terminal_id: id }, wide);
      untouched();
    });
  });

  describe('transfers', () => {
    const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
    // A path through /proc/self is the agent's own process entry: refused by name (blocked_by_ceiling) whatever it
    // leads to, so it tells nothing about what is behind it. Every other hidden path looks missing.
    const refusalFor = (path: string) => (path.startsWith('/proc/self/') ? 'blocked_by_ceiling' : 'not_found');
    /** The destination's manifest digest of a scripted tree (what an honest source would send). */
    const digestOf = (entries: { path: string; kind: 'dir' | 'symlink'; mode: number; target?: string }[]) => {
      const m = new ManifestDigest();
      for (const e of entries) m.add(e);
      return m.digest();
    };
    const noTemps = () => expect(readdirSync(work).filter((n) => n.includes('letkite-xfer'))).toEqual([]);

    test('transfer_send of a denied path, by any spelling, is not_found and streams nothing', async () => {
      for (const path of [
        secretFile,
        join(secretDir, 'token.txt'),
        secretDir,
        join(work, 'link-to-secret'),
        join(work, 'link-to-secret-file'),
        `/proc/self/root${secretFile}`,
        `${work}/sub/../secret`,
      ]) {
        const id = `snd${unique()}`;
        const r = await env.rogue.request('transfer_send', { path }, wide, id);
        env.rogue.sendRaw({ type: 'credit', id, bytes: 1 << 20 });
        expect(`${path}: ${codeOf(r)}`).toBe(`${path}: ${refusalFor(path)}`);
        expect(env.rogue.streamed(id)).toEqual([]);
      }
    });

    test('transfer_send of the work tree leaves the denied entries and outward symlinks out', async () => {
      const id = `tree${unique()}`;
      const answer = env.rogue.request('transfer_send', { path: work, include_hidden: false }, wide, id);
      // One window's worth, as an honest gateway would relay it: the tree is far smaller.
      env.rogue.sendRaw({ type: 'credit', id, bytes: 32 << 20 });
      const r = await answer;
      expect(codeOf(r), everything(r)).toBe('ok');
      const streamed = env.rogue.streamed(id);
      const paths = streamed.flatMap((f) => (f.type === 'entry' ? [f.entry.path] : []));
      expect(paths).toContain('sub/plain.txt');
      expect(paths.some((p) => p.startsWith('secret'))).toBe(false);
      expect(paths).not.toContain('link-to-secret');
      expect(paths).not.toContain('link-to-secret-file');
      const data = Buffer.concat(streamed.flatMap((f) => (f.type === 'data' ? [f.payload] : [])));
      expect(data.toString('latin1')).not.toContain(SECRET);
      expect(data.toString('latin1')).not.toContain(SECRET_FILE_TEXT);
    });

    test('a source granted more credit than any window refuses, instead of reading the file into memory', async () => {
      const big = join(work, `big-${unique()}.bin`);
      writeFileSync(big, Buffer.alloc(24 * 1024 * 1024, 0x62));
      try {
        for (const grant of [[2 ** 30], Array.from({ length: 100 }, () => 1024 * 1024)]) {
          const id = `greedy${unique()}`;
          const answer = env.rogue.request('transfer_send', { path: big }, wide, id);
          for (const bytes of grant) env.rogue.sendRaw({ type: 'credit', id, bytes });
          const r = await answer;
          expect(codeOf(r), everything(r).slice(0, 300)).toBe('protocol_error');
        }
      } finally {
        removeDir(big);
      }
    });

    /** Pushes a scripted stream into a transfer_receive and returns its answer. */
    async function receive(
      path: string,
      frames: (Record<string, unknown> | Buffer)[],
      context: Record<string, unknown> = wide,
    ) {
      const id = `rcv${unique()}`;
      const answer = env.rogue.request('transfer_receive', { path }, context, id);
      let answered = false;
      void answer.then(() => {
        answered = true;
      });
      await waitFor(
        'the destination to grant credit',
        () => answered || env.rogue.streamed(id).some((f) => f.type === 'credit'),
      );
      for (const f of frames)
        env.rogue.sendRaw(Buffer.isBuffer(f) ? Buffer.from(encodeDataFrame(id, f)) : { ...f, id });
      const r = await Promise.race([
        answer,
        sleep(8000).then(() => ({ ok: false, chunks: [], error: { code: 'hung', message: '' } }) as RogueAnswer),
      ]);
      if (codeOf(r) === 'hung') env.rogue.sendRaw({ type: 'cancel', id });
      return r;
    }

    const fileStream = (content: Buffer, entryEnd: { bytes?: number; sha256?: string } = {}, streamSha?: string) => [
      { type: 'entry', entry: { path: '', kind: 'file', mode: 0o644, size: content.length, total_files: 1 } },
      content,
      { type: 'entry_end', bytes: entryEnd.bytes ?? content.length, sha256: entryEnd.sha256 ?? sha(content) },
      { type: 'stream_end', sha256: streamSha ?? sha(content) },
    ];

    test('transfer_receive into a read-only, denied or outside path writes nothing', async () => {
      const content = Buffer.from('pwned\n');
      for (const [path, code] of [
        [join(roDir, 'new.txt'), 'blocked_by_policy'],
        [roFile, 'blocked_by_policy'],
        [join(secretDir, 'new.txt'), 'not_found'],
        [join(work, 'link-to-secret', 'new.txt'), 'not_found'],
        [join(work, 'sub', 'up-to-secret', 'new.txt'), 'not_found'],
        [`/proc/self/root${secretDir}/new.txt`, 'not_found'],
        [secretFile, 'not_found'],
      ] as const) {
        const r = await receive(path, fileStream(content), { ...wide, policy: { ...widest } });
        expect(`${path}: ${codeOf(r)}`).toBe(`${path}: ${code === 'not_found' ? refusalFor(path) : code}`);
      }
      untouched();
      expect(existsSync(join(secretDir, 'new.txt'))).toBe(false);
      expect(existsSync(join(roDir, 'new.txt'))).toBe(false);
      noTemps();
    });

    test('a lying sha256 or byte count leaves nothing in place and no temporary copy', async () => {
      const content = Buffer.from('hello transfer\n');
      const cases = [
        fileStream(content, { sha256: sha('something else') }),
        fileStream(content, { bytes: 3 }),
        fileStream(content, {}, sha('another stream')),
      ];
      for (const frames of cases) {
        const dest = join(work, `lie-${unique()}.txt`);
        const r = await receive(dest, frames);
        expect(codeOf(r)).toBe('protocol_error');
        expect(existsSync(dest)).toBe(false);
      }
      noTemps();
      // The honest stream lands (so the refusals are about the lies).
      const dest = join(work, `honest-${unique()}.txt`);
      expect(codeOf(await receive(dest, fileStream(content)))).toBe('ok');
      expect(readFileSync(dest, 'utf8')).toBe('hello transfer\n');
    });

    test('entries with ../ or absolute names are refused and nothing lands outside the destination', async () => {
      const outside = join(work, `escaped-${unique()}`);
      for (const name of [`../${outside.split('/').pop()}`, outside, 'a/../../x', './x', 'a//b']) {
        const dest = join(work, `tree-${unique()}`);
        const r = await receive(dest, [
          { type: 'entry', entry: { path: '', kind: 'dir', mode: 0o755, total_files: 1 } },
          { type: 'entry', entry: { path: name, kind: 'file', mode: 0o644, size: 1 } },
          Buffer.from('x'),
          { type: 'entry_end', bytes: 1, sha256: sha('x') },
          { type: 'stream_end', sha256: '0'.repeat(64) },
        ]);
        expect(`${name}: ${codeOf(r)}`).not.toBe(`${name}: ok`);
        expect(existsSync(dest)).toBe(false);
        await env.rogue.connected();
      }
      expect(existsSync(outside)).toBe(false);
      noTemps();
    });

    test('symlink entries that point out of the tree, directly or through another link, are not created', async () => {
      const dest = join(work, `links-${unique()}`);
      const entries = [
        { path: '', kind: 'dir', mode: 0o755 },
        { path: 'sub', kind: 'dir', mode: 0o755 },
        { path: 'sub/up', kind: 'symlink', mode: 0o777, target: '..' },
        { path: 'inside', kind: 'symlink', mode: 0o777, target: 'sub' },
        { path: 'abs', kind: 'symlink', mode: 0o777, target: secretDir },
        { path: 'rel', kind: 'symlink', mode: 0o777, target: '../secret' },
        // Lexically "sub/secret", really ../secret: sub/up is the tree's root, so its .. is outside.
        { path: 'chain', kind: 'symlink', mode: 0o777, target: 'sub/up/../secret' },
        { path: 'chain2', kind: 'symlink', mode: 0o777, target: 'sub/up/../../secret' },
        { path: 'sub/chain3', kind: 'symlink', mode: 0o777, target: 'up/up/../secret' },
      ] as const;
      const r = await receive(dest, [
        ...entries.map((entry) => ({ type: 'entry', entry })),
        { type: 'stream_end', sha256: digestOf([...entries]) },
      ]);
      // Whatever the digest says, no link that leaves the tree may exist afterwards.
      const escapes: string[] = [];
      for (const name of ['abs', 'rel', 'chain', 'chain2', 'sub/chain3']) {
        const p = join(dest, name);
        if (!existsSync(p)) continue;
        const real = realpathSync.native(p);
        if (!real.startsWith(`${dest}/`)) escapes.push(`${name} -> ${real}`);
      }
      expect(escapes).toEqual([]);
      // The stream itself was honest: it lands, the links inside the tree with it, the others are reported.
      expect(codeOf(r), everything(r)).toBe('ok');
      expect(realpathSync.native(join(dest, 'inside'))).toBe(join(realpathSync(dest), 'sub'));
      const skipped = (r.result as { skipped: { path: string; reason: string }[] }).skipped;
      expect(skipped.map((s) => s.path).sort()).toEqual(['abs', 'chain', 'chain2', 'rel', 'sub/chain3']);
      noSecretIn(r);
      noTemps();
    });

    test('a destination takes at most MAX_TRANSFER_ENTRIES entries, however much credit flows', async () => {
      const dest = join(work, `many-${unique()}`);
      const id = `many${unique()}`;
      const window = 64 * 1024 * 1024;
      const answer = env.rogue.request('transfer_receive', { path: dest, window_bytes: window }, wide, id);
      let answered: RogueAnswer | null = null;
      void answer.then((a) => {
        answered = a;
      });
      let seen = 0;
      let credit = 0;
      const granted = () => {
        const frames = env.rogue.streamed(id);
        for (; seen < frames.length; seen += 1) {
          const f = frames[seen];
          if (f?.type === 'credit') credit += f.bytes;
        }
        return credit;
      };
      env.rogue.sendRaw({ type: 'entry', id, entry: { path: '', kind: 'dir', mode: 0o755 } });
      let spent = 1024;
      // Cheap entries (links that point out are only counted and reported), sent within the credit granted.
      for (let i = 0; i < MAX_TRANSFER_ENTRIES + 10 && !answered; i += 1) {
        while (spent + 1024 > granted() && !answered) await sleep(5);
        env.rogue.sendRaw({ type: 'entry', id, entry: { path: `l${i}`, kind: 'symlink', mode: 0o777, target: '/x' } });
        spent += 1024;
      }
      env.rogue.sendRaw({ type: 'stream_end', id, sha256: '0'.repeat(64) });
      const r = await answer;
      expect(codeOf(r)).toBe('too_large');
      expect(existsSync(dest)).toBe(false);
      noTemps();
    });

    test('a transfer lists at most 1000 skipped entries, so its answer fits in one frame', async () => {
      const tree = join(work, `skips-${unique()}`);
      mkdirSync(tree);
      for (let i = 0; i < 1500; i += 1) symlinkSync('/etc/hostname', join(tree, `outward-link-number-${i}`));
      try {
        const id = `skips${unique()}`;
        const answer = env.rogue.request('transfer_send', { path: tree }, wide, id);
        // One window's worth, as an honest gateway would relay it: the tree is far smaller.
        env.rogue.sendRaw({ type: 'credit', id, bytes: 32 << 20 });
        const r = await answer;
        expect(codeOf(r)).toBe('ok');
        const skipped = (r.result as { skipped: unknown[] }).skipped;
        expect(skipped.length).toBe(1000);
        expect(JSON.stringify(r.result).length).toBeLessThan(MAX_FRAME_BYTES / 2);
      } finally {
        removeDir(tree);
      }
    });

    test('a file entry below a symlink entry is refused (no writing through a link)', async () => {
      const dest = join(work, `through-${unique()}`);
      const r = await receive(dest, [
        { type: 'entry', entry: { path: '', kind: 'dir', mode: 0o755, total_files: 1 } },
        { type: 'entry', entry: { path: 'l', kind: 'symlink', mode: 0o777, target: '.' } },
        { type: 'entry', entry: { path: 'l/x', kind: 'file', mode: 0o644, size: 1 } },
        Buffer.from('x'),
        { type: 'entry_end', bytes: 1, sha256: sha('x') },
        { type: 'stream_end', sha256: '0'.repeat(64) },
      ]);
      expect(codeOf(r)).toBe('protocol_error');
      expect(existsSync(dest)).toBe(false);
      noTemps();
    });
  });
});

describe('a compromised gateway against a machine whose ceiling forces allowlist mode', () => {
  let env: Awaited<ReturnType<typeof rogueAgent>>;
  let work: string;
  const options: RogueOptions = {};
  const listed = {
    name: 'list',
    shell: 'full',
    files: [{ path: '*', access: 'rw' }],
    commands: { mode: 'allowlist', allow: ['ls *', 'touch *'] },
  };
  const asListed = { policy: listed, approved: true, confirm: true, actor: 'mallory' };

  beforeAll(async () => {
    work = tempDir('rogue-allow-work');
    mkdirSync(join(work, 'secret'));
    writeFileSync(join(work, 'secret', 'token.txt'), `${SECRET}\n`);
    env = await rogueAgent(
      'allow',
      [
        'version = 1',
        'shell = "sandboxed"',
        'commands_mode = "allowlist"',
        'allow = ["ls *", "touch *"]',
        'run_as = "root"',
        `files = [{ path = "${work}", access = "rw" }, { path = "/usr", access = "ro" }]`,
        `deny = ["${join(work, 'secret')}"]`,
        'terminals = false',
        '',
      ].join('\n'),
      options,
    );
  });

  afterAll(async () => {
    await env?.dispose();
    removeDir(work);
  });

  test('a listed program runs with execve (the control that shows the machine is usable)', async () => {
    const marker = join(work, `listed-${unique()}`);
    const r = await env.rogue.request('exec', { argv: ['touch', marker], ...run }, asListed);
    expect(codeOf(r), everything(r)).toBe('ok');
    expect(existsSync(marker)).toBe(true);
  });

  test('a policy that widens the allowlist, leaves allowlist mode or uses shell syntax runs nothing', async () => {
    const marker = join(work, `widened-${unique()}`);
    const wider = {
      ...listed,
      commands: { mode: 'allowlist', allow: ['ls *', 'touch *', 'bash *', 'python3 *', 'sh *', 'env *'] },
    };
    const shellMode = { ...listed, commands: { mode: 'shell', default: 'allow' } };
    const attempts: [unknown, Record<string, unknown>][] = [
      [wider, { argv: ['bash', '-c', `touch ${marker}`] }],
      [wider, { argv: ['sh', '-c', `touch ${marker}`] }],
      [wider, { argv: ['python3', '-c', `open('${marker}','w')`] }],
      [wider, { argv: ['env', 'touch', marker] }],
      [shellMode, { command: `touch ${marker}` }],
      [shellMode, { command: `ls; touch ${marker}` }],
      [listed, { command: `ls && touch ${marker}` }],
      [listed, { command: `touch $(echo ${marker})` }],
      [listed, { argv: ['/lib64/ld-linux-x86-64.so.2', '/usr/bin/touch', marker] }],
      [listed, { argv: ['./touch', marker], cwd: '/usr/bin' }],
    ];
    const failures: string[] = [];
    for (const [policy, params] of attempts) {
      const r = await env.rogue.request('exec', { ...params, ...run }, { ...asListed, policy });
      if (r.ok) failures.push(`${JSON.stringify(params)} -> ok`);
    }
    await sleep(300);
    expect(failures).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  test('shell sessions and terminals do not exist here', async () => {
    const s = await env.rogue.request('shell_run', { command: 'ls', ...run }, asListed);
    expect(['unsupported', 'blocked_by_ceiling']).toContain(codeOf(s));
    const t = await env.rogue.request('terminal_open', { cols: 80, rows: 24 }, asListed);
    expect(['unsupported', 'blocked_by_ceiling']).toContain(codeOf(t));
  });

  test('paths outside the ceiling’s files list are missing for the file tools and transfers', async () => {
    const outside = tempDir('rogue-outside');
    for (const [op, params] of [
      ['read_file', { path: '/etc/passwd' }],
      ['read_file', { path: `/proc/self/root/etc/passwd` }],
      ['read_file', { path: `${work}/../../etc/passwd` }],
      ['list_dir', { path: '/etc' }],
      ['write_file', { path: join(outside, 'x'), content: 'x' }],
      ['transfer_receive', { path: join(outside, 'y') }],
      ['transfer_send', { path: '/etc/passwd' }],
      ['transfer_send', { path: join(work, 'secret') }],
    ] as const) {
      const r = await env.rogue.request(op, params, asListed);
      expect(`${op} ${JSON.stringify(params)}: ${codeOf(r)}`).toBe(`${op} ${JSON.stringify(params)}: not_found`);
      expect(everything(r)).not.toContain('root:x:0:0');
    }
    expect(readdirSync(outside)).toEqual([]);
    removeDir(outside);
  });

  test('malformed parameters are invalid_params; every refusal is in the agent log; the report names the file', async () => {
    for (const [op, params] of [
      ['exec', { command: 12 }],
      ['exec', { argv: [], ...run }],
      ['read_file', { path: 'relative/path' }],
      ['write_file', { path: `${work}/x\u0000y`, content: 'x' }],
      ['job_start', { command: ['not', 'a', 'string'] }],
      ['transfer_receive', { path: work, window_bytes: -1 }],
    ] as const) {
      const r = await env.rogue.request(op, params, asListed);
      expect(`${op}: ${codeOf(r)}`).toBe(`${op}: invalid_params`);
    }
    const refused = (env.agent.stderr.match(/refused /g) ?? []).length;
    await env.rogue.request('exec', { argv: ['rm', '-rf', work], ...run }, asListed);
    await waitFor('the refusal in the agent log', () => (env.agent.stderr.match(/refused /g) ?? []).length > refused);
    expect(existsSync(work)).toBe(true);
    expect(env.rogue.reports[0]).toMatchObject({ type: 'report', ceiling_source: 'file' });
  });

  describe('protocol abuse (each leaves the agent serving, and runs nothing it should not)', () => {
    const marker = () => join(work, `proto-${unique()}`);
    const touch = (m: string) => ({ argv: ['touch', m], ...run });

    test('text the gateway chose (paths, ops, ids, actors) cannot forge lines in the agent log', async () => {
      const forged = '[agent] connected to http://forged.example/ as mch_forged';
      await env.rogue.request('read_file', { path: `/nonexistent\n${forged}` }, asListed);
      await env.rogue.request(`op\n${forged}`, {}, asListed);
      await env.rogue.request('read_file', { path: '/nonexistent' }, { ...asListed, actor: `eve\r\n${forged}` });
      await env.rogue.request('exec', { argv: ['ls'], ...run }, asListed, `id\n${forged}`.slice(0, 64));
      await sleep(300);
      expect(env.agent.stderr).not.toMatch(/[\r\n]\[agent\] connected to http:\/\/forged/);
      expect(env.agent.stderr).toContain('forged.example');
    });

    test('at most 128 requests run at once; the next one is refused and runs nothing', async () => {
      const waiting: Promise<RogueAnswer>[] = [];
      const ids: string[] = [];
      for (let i = 0; i < 128; i += 1) {
        const id = `held${i}-${unique()}`;
        ids.push(id);
        waiting.push(env.rogue.request('transfer_receive', { path: join(work, `held-${id}`) }, asListed, id));
      }
      const m = marker();
      const over = await env.rogue.request('exec', touch(m), asListed);
      expect(codeOf(over)).toBe('rate_limited');
      for (const id of ids) env.rogue.sendRaw({ type: 'cancel', id });
      await Promise.all(waiting);
      await sleep(300);
      expect(existsSync(m)).toBe(false);
      const after = await env.rogue.request('exec', touch(m), asListed);
      expect(codeOf(after)).toBe('ok');
      expect(readdirSync(work).filter((n) => n.includes('held-') || n.includes('letkite-xfer'))).toEqual([]);
    });

    test('unknown ops are unsupported; names of object members are no ops', async () => {
      for (const op of ['format_disk', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'run', 'EXEC']) {
        const r = await env.rogue.request(op, touch(marker()), asListed);
        expect(`${op}: ${codeOf(r)}`).toBe(`${op}: unsupported`);
      }
    });

    test('cancel, credit, stream frames and binary data for unknown ids are ignored', async () => {
      env.rogue.sendRaw({ type: 'cancel', id: 'nope' });
      env.rogue.sendRaw({ type: 'credit', id: 'nope', bytes: 1_000_000 });
      env.rogue.sendRaw({ type: 'entry_end', id: 'nope', bytes: 1, sha256: '0'.repeat(64) });
      env.rogue.sendRaw({ type: 'stream_end', id: 'nope', sha256: '0'.repeat(64) });
      env.rogue.sendRaw(Buffer.from(encodeDataFrame('nope', Buffer.alloc(1000))));
      const m = marker();
      const r = await env.rogue.request('exec', touch(m), asListed);
      expect(codeOf(r)).toBe('ok');
      expect(existsSync(m)).toBe(true);
    });

    test('a request id already in flight is refused and its request never runs; the first one answers', async () => {
      const second = marker();
      const id = `dup${unique()}`;
      const answer = env.rogue.request('exec', { argv: ['ls', '-R', '/usr'], ...run }, asListed, id);
      env.rogue.sendRaw({ type: 'request', id, op: 'exec', params: touch(second), context: asListed });
      env.rogue.sendRaw({ type: 'request', id, op: 'exec', params: touch(second), context: asListed });
      const r = await answer;
      // The first answer for this id is the refusal of the duplicate; the first request itself is never cut short.
      expect(codeOf(r), everything(r)).toBe('protocol_error');
      await sleep(1000);
      expect(existsSync(second)).toBe(false);
    });

    test('stream frames pushed at a request that takes no stream close the socket instead of piling up', async () => {
      // The request must still be running while the flood arrives: a job of the allowlisted `ls` over /usr.
      for (const flood of [
        (id: string) => {
          const payload = Buffer.alloc(1000 * 1024, 0x61);
          for (let i = 0; i < 48; i += 1) env.rogue.sendRaw(Buffer.from(encodeDataFrame(id, payload)));
        },
        (id: string) => {
          for (let i = 0; i < 5000; i += 1) env.rogue.sendRaw({ type: 'credit', id, bytes: 1 });
        },
      ]) {
        await env.rogue.connected();
        const closes = env.rogue.closes.length;
        const id = `flood${unique()}`;
        const answer = env.rogue.request('exec', { argv: ['ls', '-R', '/usr'], ...run }, asListed, id);
        flood(id);
        await waitFor('the agent to close the socket', () => env.rogue.closes.length > closes);
        expect(env.rogue.closes.at(-1)).toBe(1008);
        expect(codeOf(await answer)).toBe('closed');
      }
      await env.rogue.connected();
      const m = marker();
      const after = await env.rogue.request('exec', touch(m), asListed);
      expect(codeOf(after)).toBe('ok');
    });

    test('an oversized frame (> 1 MiB) closes the socket and its request never runs', async () => {
      const m = marker();
      const closes = env.rogue.closes.length;
      env.rogue.sendRaw({
        type: 'request',
        id: 'big',
        op: 'exec',
        params: { argv: ['touch', m, 'x'.repeat(1_100_000)], ...run },
        context: asListed,
      });
      await waitFor('the agent to close the socket', () => env.rogue.closes.length > closes);
      expect(env.rogue.closes.at(-1)).toBe(1009);
      await env.rogue.connected();
      await sleep(300);
      expect(existsSync(m)).toBe(false);
    });

    test('malformed JSON and frames that break the schema close the socket and run nothing', async () => {
      const m = marker();
      const frames: (string | object)[] = [
        `{"type":"request","id":"bad","op":"exec","params":{"argv":["touch","${m}"]`,
        { type: 'request', id: 'bad', op: 'exec', params: touch(m) },
        { type: 'request', id: '', op: 'exec', params: touch(m), context: asListed },
        { type: 'request', id: 'bad', op: 'exec', params: touch(m), context: { ...asListed, approval_proof: 'yes' } },
        { type: 'launch', id: 'bad', op: 'exec', params: touch(m), context: asListed },
        [{ type: 'request', id: 'bad', op: 'exec', params: touch(m), context: asListed }],
      ];
      for (const frame of frames) {
        await env.rogue.connected();
        const closes = env.rogue.closes.length;
        if (typeof frame === 'string') env.rogue.sendText(frame);
        else env.rogue.sendRaw(frame);
        await waitFor('the agent to close the socket', () => env.rogue.closes.length > closes);
        expect(env.rogue.closes.at(-1)).toBe(1008);
      }
      await env.rogue.connected();
      await sleep(300);
      expect(existsSync(m)).toBe(false);
    });

    test('a request sent before the handshake runs nothing; the agent closes and comes back', async () => {
      const m = marker();
      options.requestBeforeHandshake = { op: 'exec', params: touch(m), context: asListed };
      const answers = env.rogue.earlyAnswers.length;
      env.rogue.sendText('not json');
      await waitFor('the early request to be refused', () => env.rogue.earlyAnswers.length > answers);
      delete options.requestBeforeHandshake;
      expect(env.rogue.earlyAnswers.at(-1)?.ok).toBe(false);
      await env.rogue.connected();
      await sleep(300);
      expect(existsSync(m)).toBe(false);
      const r = await env.rogue.request('exec', touch(m), asListed);
      expect(codeOf(r)).toBe('ok');
    });
  });
});
