/**
 * Issue #10 items 3, 4 and 8, tried as an attacker would through a real gateway and real agents (and through a
 * compromised gateway, to prove the agent refuses on its own): the `env` argument judged like an assignment on
 * the command line (allowlist mode runs the trusted program, loader variables are refused), a `cwd` checked against
 * the file rules, and the git tools never reading a hidden repository nor running a program the repository chose.
 * Every attack checks its side effect (a marker file, a secret printed), not only the reply.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { CliProcess, removeDir, tempDir, waitFor } from './support/processes';
import { RogueGateway } from './support/rogue-gateway';

interface ExecOut {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}

const unique = () => randomBytes(6).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
function dir(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
}

/** An executable script that leaves a marker file when anything runs it. */
function markerScript(where: string, name: string, marker: string): string {
  const path = join(where, name);
  writeFileSync(path, `#!/bin/sh\necho ran >> '${marker}'\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A shared object whose constructor appends to $EVIL_MARKER: proof that a loader variable took effect. */
function evilLibrary(where: string): string {
  const src = join(where, 'evil.c');
  const lib = join(where, 'evil.so');
  writeFileSync(
    src,
    '#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void evil(void) {\n' +
      '  const char *m = getenv("EVIL_MARKER"); if (!m) return;\n' +
      '  FILE *f = fopen(m, "a"); if (f) { fputs("pwned\\n", f); fclose(f); }\n}\n',
  );
  execFileSync('cc', ['-shared', '-fPIC', '-o', lib, src]);
  return lib;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  });
}

let gw: TestGateway;
let full: Client;
const agents: TestAgent[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  gw = await TestGateway.start();
  full = await mcpClient(gw.url, await gw.apiToken());
  clients.push(full);
});

afterAll(async () => {
  for (const c of clients) await c.close();
  for (const a of agents) await a.dispose();
  await gw?.dispose();
  for (const d of dirs) removeDir(d);
});

async function agentWith(name: string, ceiling: string): Promise<TestAgent> {
  const a = await gw.addAgent(name, { ceiling });
  agents.push(a);
  return a;
}

async function clientWith(policy: Record<string, unknown>): Promise<Client> {
  const c = await mcpClient(
    gw.url,
    await gw.apiTokenWithGrant({ policy: { name: `p-${unique()}`, ...policy }, machines: '*', scopes: '*' } as never),
  );
  clients.push(c);
  return c;
}

async function jobRan(client: Client, args: Record<string, unknown>, marker: string) {
  const started = await callTool<{ job_id: string }>(client, 'job_start', args);
  if (started.ok) {
    await waitFor('the job to end', async () => {
      const s = await callTool<{ state: string }>(client, 'job_status', {
        machine: args.machine,
        job_id: started.data.job_id,
      });
      return s.data.state !== 'running';
    });
  }
  await sleep(200);
  return { started, ran: existsSync(marker) };
}

describe('3: env is judged like the same assignment written on the command line', () => {
  let work: string;
  let fakeBin: string;
  let repo: string;
  let allowlist: Client;
  let shellRules: Client;

  beforeAll(async () => {
    work = dir('env-work');
    fakeBin = join(work, 'bin');
    mkdirSync(fakeBin);
    repo = join(work, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-qm', 'one');
    await agentWith(
      'env-box',
      `version = 1\nshell = "full"\nrun_as = "root"\nfiles = [{ path = "*", access = "rw" }]\ndeny = []\n`,
    );
    allowlist = await clientWith({
      shell: 'full',
      files: [{ path: '*', access: 'rw' }],
      commands: { mode: 'allowlist', allow: ['ls *', 'git status'] },
    });
    shellRules = await clientWith({
      shell: 'full',
      files: [{ path: '*', access: 'rw' }],
      commands: {
        mode: 'shell',
        default: 'approve',
        rules: [
          { match: 'ls *', verdict: 'allow' },
          { match: 'git status', verdict: 'allow' },
        ],
      },
    });
  });

  test('allowlist mode: PATH pointing at a fake ls is refused and the fake never runs (command and argv)', async () => {
    const marker = join(work, `ls-${unique()}`);
    markerScript(fakeBin, 'ls', marker);
    for (const call of [{ command: 'ls' }, { argv: ['ls', '-la'] }]) {
      const r = await callTool<ExecOut>(allowlist, 'exec', { machine: 'env-box', ...call, env: { PATH: fakeBin } });
      expect(r.error?.code, JSON.stringify(r)).toBe('blocked_by_policy');
    }
    const job = await jobRan(allowlist, { machine: 'env-box', command: 'ls', env: { PATH: fakeBin } }, marker);
    expect(job.started.error?.code).toBe('blocked_by_policy');
    expect(existsSync(marker)).toBe(false);
  });

  test('allowlist mode: a listed program still runs with harmless variables, from the system path', async () => {
    const r = await callTool<ExecOut>(allowlist, 'exec', {
      machine: 'env-box',
      argv: ['ls', work],
      env: { LANG: 'C', MY_SETTING: '1' },
    });
    expect(r.data.exit_code, JSON.stringify(r)).toBe(0);
    expect(r.data.stdout).toContain('repo');
  });

  test('allowlist mode: GIT_CONFIG_* turning an allowed git status into core.fsmonitor is refused, nothing runs', async () => {
    const marker = join(work, `fsmonitor-${unique()}`);
    const hook = markerScript(work, `hook-${unique()}`, marker);
    const env = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: hook };
    const r = await callTool(allowlist, 'exec', { machine: 'env-box', command: 'git status', cwd: repo, env });
    expect(r.error?.code, JSON.stringify(r)).toBe('blocked_by_policy');
    const job = await jobRan(allowlist, { machine: 'env-box', command: 'git status', cwd: repo, env }, marker);
    expect(job.started.error?.code).toBe('blocked_by_policy');
    expect(existsSync(marker)).toBe(false);
  });

  test('shell mode: an allowed command with PATH or GIT_CONFIG_* in env waits for a human instead of running', async () => {
    const marker = join(work, `shell-${unique()}`);
    markerScript(fakeBin, 'ls', marker);
    const r = await callTool(shellRules, 'exec', { machine: 'env-box', command: 'ls', env: { PATH: fakeBin } });
    expect((r.data as { status?: string }).status, JSON.stringify(r)).toBe('pending_approval');
    const hook = markerScript(work, `hook-${unique()}`, marker);
    const g = await callTool(shellRules, 'exec', {
      machine: 'env-box',
      command: 'git status',
      cwd: repo,
      env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: hook },
    });
    expect((g.data as { status?: string }).status, JSON.stringify(g)).toBe('pending_approval');
    await sleep(300);
    expect(existsSync(marker)).toBe(false);
  });

  test('LD_PRELOAD (and the other loader variables) are denied by the gateway, whatever the policy', async () => {
    const lib = evilLibrary(work);
    const marker = join(work, `preload-${unique()}`);
    for (const env of [
      { LD_PRELOAD: lib, EVIL_MARKER: marker },
      { LD_LIBRARY_PATH: work, EVIL_MARKER: marker },
      { GCONV_PATH: work },
      { GLIBC_TUNABLES: 'glibc.malloc.check=3' },
    ]) {
      const r = await callTool(full, 'exec', { machine: 'env-box', command: 'echo ran', env });
      expect(r.error?.code, JSON.stringify({ env, r })).toBe('blocked_by_policy');
    }
    const job = await jobRan(
      full,
      { machine: 'env-box', command: 'echo ran', env: { LD_PRELOAD: lib, EVIL_MARKER: marker } },
      marker,
    );
    expect(job.started.error?.code).toBe('blocked_by_policy');
    expect(existsSync(marker)).toBe(false);
  });

  test('exec_many judges env on every machine the same way', async () => {
    const marker = join(work, `many-${unique()}`);
    const lib = join(work, 'evil.so');
    const r = await callTool<{ results: { ok: boolean; error?: { code: string } }[] }>(full, 'exec_many', {
      machines: ['env-box'],
      command: 'echo ran',
      env: { LD_PRELOAD: lib, EVIL_MARKER: marker },
    });
    expect(r.ok ? r.data.results.map((x) => x.error?.code) : [r.error?.code], JSON.stringify(r)).toEqual([
      'blocked_by_policy',
    ]);
    const m = await callTool<{ results: { ok: boolean; error?: { code: string } }[] }>(allowlist, 'exec_many', {
      machines: ['env-box'],
      command: 'ls',
      env: { PATH: fakeBin },
    });
    expect(m.ok ? m.data.results.map((x) => x.error?.code) : [m.error?.code], JSON.stringify(m)).toEqual([
      'blocked_by_policy',
    ]);
    await sleep(200);
    expect(existsSync(marker)).toBe(false);
  });

  test('an ordinary variable still reaches the command', async () => {
    const r = await callTool<ExecOut>(full, 'exec', {
      machine: 'env-box',
      command: 'echo "[$GREETING]"',
      env: { GREETING: 'hello' },
    });
    expect(r.data.stdout).toBe('[hello]\n');
  });
});

describe('3 and 4 on the agent alone: a compromised gateway gets the same refusals', () => {
  test('env and cwd tricks sent by a gateway that skipped its own checks are refused, nothing runs', async () => {
    const rogue = await RogueGateway.start();
    const stateDir = dir('rogue-env');
    const work = dir('rogue-env-work');
    const fakeBin = join(work, 'bin');
    mkdirSync(fakeBin);
    mkdirSync(join(work, 'secret'));
    writeFileSync(join(work, 'secret', 'token.txt'), 'rogue-hidden-7731');
    const lib = evilLibrary(work);
    writeFileSync(join(stateDir, 'agent.json'), JSON.stringify(rogue.agentState()), { mode: 0o600 });
    const ceilingPath = join(stateDir, 'ceiling.toml');
    writeFileSync(
      ceilingPath,
      [
        'version = 1',
        'shell = "full"',
        'run_as = "root"',
        `files = [{ path = "${work}", access = "rw" }]`,
        `deny = ["${join(work, 'secret')}"]`,
        '',
      ].join('\n'),
      { mode: 0o644 },
    );
    const agent = new CliProcess(['agent', 'run', '--state-dir', stateDir, '--ceiling', ceilingPath]);
    try {
      await rogue.connected();
      const widest = {
        policy: { name: 'evil', shell: 'full', files: [{ path: '*', access: 'rw' }], commands: { default: 'allow' } },
        approved: true,
        confirm: true,
      };
      const run = { timeout_ms: 5000, max_output_bytes: 10_000 };

      const marker = join(work, `preload-${unique()}`);
      const preload = await rogue.request(
        'exec',
        { command: 'echo ran', env: { LD_PRELOAD: lib, EVIL_MARKER: marker }, ...run },
        widest,
      );
      expect(preload.error?.code, JSON.stringify(preload)).toBe('blocked_by_policy');
      const preloadJob = await rogue.request(
        'job_start',
        { command: 'echo ran', env: { LD_PRELOAD: lib, EVIL_MARKER: marker }, timeout_ms: 5000 },
        widest,
      );
      expect(preloadJob.error?.code, JSON.stringify(preloadJob)).toBe('blocked_by_policy');

      const lsMarker = join(work, `ls-${unique()}`);
      markerScript(fakeBin, 'ls', lsMarker);
      const allowlisted = {
        ...widest,
        policy: {
          name: 'list',
          shell: 'full',
          files: [{ path: '*', access: 'rw' }],
          commands: { mode: 'allowlist', allow: ['ls *'] },
        },
      };
      const fakeLs = await rogue.request('exec', { argv: ['ls'], env: { PATH: fakeBin }, ...run }, allowlisted);
      expect(fakeLs.error?.code, JSON.stringify(fakeLs)).toBe('blocked_by_policy');

      const inDenied = await rogue.request(
        'exec',
        { command: 'cat token.txt', cwd: join(work, 'secret'), ...run },
        widest,
      );
      expect(inDenied.error?.code, JSON.stringify(inDenied)).toBe('blocked_by_ceiling');
      expect(JSON.stringify(inDenied)).not.toContain('rogue-hidden-7731');
      const jobInDenied = await rogue.request(
        'job_start',
        { command: 'cat token.txt', cwd: join(work, 'secret'), timeout_ms: 5000 },
        widest,
      );
      expect(jobInDenied.error?.code, JSON.stringify(jobInDenied)).toBe('blocked_by_ceiling');
      const terminalInDenied = await rogue.request(
        'terminal_open',
        { cols: 80, rows: 24, cwd: join(work, 'secret') },
        widest,
      );
      expect(terminalInDenied.error?.code, JSON.stringify(terminalInDenied)).toBe('blocked_by_ceiling');

      await sleep(300);
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(lsMarker)).toBe(false);
    } finally {
      await agent.stop();
      await rogue.close();
    }
  });
});

describe('4: a cwd inside a denied directory is refused before anything starts', () => {
  let work: string;
  let secret: string;
  beforeAll(async () => {
    work = dir('cwd-work');
    secret = join(work, 'secret');
    mkdirSync(secret);
    writeFileSync(join(secret, 'token.txt'), 'cwd-hidden-5521');
    symlinkSync(secret, join(work, 'link'));
    await agentWith(
      'cwd-box',
      [
        'version = 1',
        'shell = "sandboxed"',
        'run_as = "root"',
        'terminals = true',
        `files = [{ path = "${work}", access = "rw" }, { path = "*", access = "ro" }]`,
        `deny = ["${secret}"]`,
        '',
      ].join('\n'),
    );
  });

  test('exec: refused by the ceiling, the same answer whether the directory exists or not', async () => {
    const there = await callTool(full, 'exec', { machine: 'cwd-box', command: 'cat token.txt', cwd: secret });
    expect(there.error?.code, JSON.stringify(there)).toBe('blocked_by_ceiling');
    expect(JSON.stringify(there)).not.toContain('cwd-hidden-5521');
    const missing = await callTool(full, 'exec', { machine: 'cwd-box', command: 'ls', cwd: join(secret, 'nope') });
    expect(missing.error?.code).toBe(there.error?.code);
    expect(missing.error?.message.replace(/\/nope/, '')).toBe(there.error?.message);
  });

  test('exec through a visible symlink into the denied directory: answered like a missing directory', async () => {
    const r = await callTool(full, 'exec', { machine: 'cwd-box', command: 'cat token.txt', cwd: join(work, 'link') });
    expect(r.ok, JSON.stringify(r)).toBe(false);
    expect(r.error?.code).toBe('not_found');
    expect(JSON.stringify(r)).not.toContain('cwd-hidden-5521');
  });

  test('job_start', async () => {
    const r = await callTool(full, 'job_start', { machine: 'cwd-box', command: 'cat token.txt', cwd: secret });
    expect(r.error?.code, JSON.stringify(r)).toBe('blocked_by_ceiling');
    const viaLink = await callTool(full, 'job_start', {
      machine: 'cwd-box',
      command: 'cat token.txt',
      cwd: join(work, 'link'),
    });
    expect(viaLink.error?.code, JSON.stringify(viaLink)).toBe('not_found');
  });

  test('terminal_open', async () => {
    const r = await callTool(full, 'terminal_open', { machine: 'cwd-box', cwd: secret });
    expect(r.error?.code, JSON.stringify(r)).toBe('blocked_by_ceiling');
    const viaLink = await callTool(full, 'terminal_open', { machine: 'cwd-box', cwd: join(work, 'link') });
    expect(viaLink.error?.code, JSON.stringify(viaLink)).toBe('not_found');
  });

  test('shell_run: a session whose home is denied does not start inside it', async () => {
    const name = `letkite-cwd-${unique()}`;
    const home = '/root';
    writeFileSync(join(home, name), 'home-hidden-8812');
    try {
      const machine = `cwd-home-${unique()}`;
      await agentWith(
        machine,
        [
          'version = 1',
          'shell = "sandboxed"',
          'run_as = "root"',
          'files = [{ path = "*", access = "ro" }]',
          `deny = ["${home}"]`,
          '',
        ].join('\n'),
      );
      const r = await callTool<ExecOut & { cwd: string }>(full, 'shell_run', {
        machine,
        command: `cat ${name}; pwd`,
      });
      expect(JSON.stringify(r)).not.toContain('home-hidden-8812');
      if (r.ok) expect(r.data.cwd).not.toBe(home);
      const e = await callTool<ExecOut>(full, 'exec', { machine, command: `cat ${name}; pwd` });
      expect(JSON.stringify(e)).not.toContain('home-hidden-8812');
    } finally {
      rmSync(join(home, name), { force: true });
    }
  });
});

describe('8: git_status and git_diff never read a hidden repository nor run what a repository chose', () => {
  let work: string;
  let hiddenRepo: string;
  beforeAll(async () => {
    work = dir('git-work');
    const hidden = join(work, 'hidden');
    hiddenRepo = join(hidden, 'repo');
    mkdirSync(hiddenRepo, { recursive: true });
    git(hiddenRepo, 'init', '-q');
    writeFileSync(join(hiddenRepo, 'plans.txt'), 'git-hidden-content-4242\n');
    git(hiddenRepo, 'add', 'plans.txt');
    git(hiddenRepo, 'commit', '-qm', 'secret plans');
    writeFileSync(join(hiddenRepo, 'plans.txt'), 'git-hidden-staged-9191\n');
    git(hiddenRepo, 'add', 'plans.txt');
    await agentWith(
      'git-box',
      [
        'version = 1',
        'shell = "full"',
        'run_as = "root"',
        `files = [{ path = "${work}", access = "rw" }]`,
        `deny = ["${hidden}"]`,
        '',
      ].join('\n'),
    );
  });

  async function bothTools(path: string) {
    return [
      await callTool(full, 'git_status', { machine: 'git-box', path }),
      await callTool(full, 'git_diff', { machine: 'git-box', path }),
      await callTool(full, 'git_diff', { machine: 'git-box', path, staged: true }),
    ];
  }

  /** A fresh directory `<work>/<name>-<random>`, made a repository with `git init` unless `init` is false. */
  function visible(name: string, init = true): string {
    const path = join(work, `${name}-${unique()}`);
    mkdirSync(path);
    if (init) git(path, 'init', '-q');
    return path;
  }

  /** The paths git_status lists at `path`, and its whole answer for the assertion message. */
  async function statusPaths(path: string): Promise<{ paths: string[] | undefined; answer: string }> {
    const status = await callTool<{ entries: { path: string }[] }>(full, 'git_status', { machine: 'git-box', path });
    return { paths: status.data.entries?.map((e) => e.path), answer: JSON.stringify(status) };
  }

  function expectNothingOfIt(results: Awaited<ReturnType<typeof bothTools>>) {
    for (const r of results) {
      expect(r.ok, JSON.stringify(r)).toBe(false);
      expect(r.error?.code).toBe('not_found');
      const text = JSON.stringify(r);
      expect(text).not.toContain('git-hidden');
      expect(text).not.toContain('plans.txt');
      expect(text).not.toContain(hiddenRepo);
    }
  }

  test('a .git file with gitdir: into the denied repository', async () => {
    const tree = visible('gitfile', false);
    writeFileSync(join(tree, '.git'), `gitdir: ${join(hiddenRepo, '.git')}\n`);
    writeFileSync(join(tree, 'plans.txt'), 'changed in the visible work tree\n');
    expectNothingOfIt(await bothTools(tree));
  });

  test('a .git directory whose commondir points into the denied repository', async () => {
    const tree = join(work, `common-${unique()}`);
    const gitDir = join(tree, '.git');
    mkdirSync(gitDir, { recursive: true });
    writeFileSync(join(gitDir, 'commondir'), `${join(hiddenRepo, '.git')}\n`);
    writeFileSync(join(gitDir, 'HEAD'), 'ref: refs/heads/master\n');
    execFileSync('cp', [join(hiddenRepo, '.git', 'index'), join(gitDir, 'index')]);
    writeFileSync(join(tree, 'plans.txt'), 'changed\n');
    expectNothingOfIt(await bothTools(tree));
  });

  test('a repository borrowing the denied objects through objects/info/alternates or a symlinked objects dir', async () => {
    for (const kind of ['alternates', 'symlink'] as const) {
      const repo = visible(kind);
      if (kind === 'alternates') {
        writeFileSync(join(repo, '.git', 'objects', 'info', 'alternates'), `${join(hiddenRepo, '.git', 'objects')}\n`);
      } else {
        rmSync(join(repo, '.git', 'objects'), { recursive: true });
        symlinkSync(join(hiddenRepo, '.git', 'objects'), join(repo, '.git', 'objects'));
      }
      execFileSync('cp', [join(hiddenRepo, '.git', 'index'), join(repo, '.git', 'index')]);
      writeFileSync(join(repo, 'plans.txt'), 'changed\n');
      expectNothingOfIt(await bothTools(repo));
    }
  });

  test('core.worktree pointing into the denied directory', async () => {
    const repo = visible('worktree');
    git(repo, 'config', 'core.worktree', hiddenRepo);
    expectNothingOfIt(await bothTools(repo));
  });

  test('config read from the denied directory (include.path) refuses; its excludes and attributes files are not read', async () => {
    const hidden = join(work, 'hidden');
    writeFileSync(join(hidden, 'extra.cfg'), '[status]\n\tshowUntrackedFiles = no\n');
    writeFileSync(join(hidden, 'ignore-list'), 'guessed-name.txt\n');
    const included = visible('include');
    git(included, 'config', 'include.path', join(hidden, 'extra.cfg'));
    writeFileSync(join(included, 'new.txt'), 'x\n');
    for (const r of await bothTools(included)) {
      expect(r.error?.code, JSON.stringify(r)).toBe('not_found');
    }

    const probing = visible('excludes');
    git(probing, 'config', 'core.excludesFile', join(hidden, 'ignore-list'));
    git(probing, 'config', 'core.attributesFile', join(hidden, 'ignore-list'));
    writeFileSync(join(probing, 'guessed-name.txt'), 'x\n');
    const status = await statusPaths(probing);
    // The hidden list would have ignored the file: it is still listed, so the list was never read.
    expect(status.paths, status.answer).toEqual(['guessed-name.txt']);
  });

  test('a repository whose config names programs (fsmonitor, external diff, textconv, filters, pager): none runs', async () => {
    const repo = visible('evil-config');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    writeFileSync(join(repo, '.gitattributes'), 'a.txt diff=evil filter=evil\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'one');
    const marker = join(work, `git-marker-${unique()}`);
    const prog = markerScript(work, `prog-${unique()}`, marker);
    for (const [key, value] of [
      ['core.fsmonitor', prog],
      ['diff.external', prog],
      ['diff.evil.textconv', prog],
      ['diff.evil.command', prog],
      ['filter.evil.clean', prog],
      ['filter.evil.smudge', prog],
      ['filter.evil.process', prog],
      ['core.pager', prog],
      ['pager.diff', prog],
      ['pager.status', prog],
      ['core.hooksPath', work],
      ['core.sshCommand', prog],
      ['include.path', join(work, 'nonexistent.cfg')],
    ] as const) {
      git(repo, 'config', key, value);
    }
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    const status = await statusPaths(repo);
    expect(status.paths, status.answer).toContain('a.txt');
    const diff = await callTool<{ diff: string }>(full, 'git_diff', { machine: 'git-box', path: repo });
    expect(diff.data.diff, JSON.stringify(diff)).toContain('+two');
    await callTool(full, 'git_diff', { machine: 'git-box', path: repo, staged: true });
    await sleep(200);
    expect(existsSync(marker)).toBe(false);
  });

  test('an ordinary repository in a visible directory still works', async () => {
    const repo = visible('plain');
    writeFileSync(join(repo, 'x.txt'), 'x\n');
    const status = await statusPaths(repo);
    expect(status.paths, status.answer).toEqual(['x.txt']);
  });
});
