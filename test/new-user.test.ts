import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { openStore } from '@letkite/gateway';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { callTool, mcpClient, TestGateway } from './support/letkite';
import { cliMain, freePort, removeDir, repoRoot, runCliCommand, tempDir, waitFor } from './support/processes';

/**
 * `letkite start` as a person runs it in a terminal: its own process group, so Ctrl-C (SIGINT to the whole
 * group, as a terminal sends it) reaches the gateway process and its local agent child alike.
 */
class StartProcess {
  readonly child: ChildProcess;
  output = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly dataDir: string,
    readonly port: number,
  ) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LETKITE_')));
    this.child = spawn(
      process.execPath,
      ['--import', 'tsx', cliMain, 'start', '--port', String(port), '--data', dataDir],
      { cwd: repoRoot, env: { ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    this.child.stdout?.on('data', (c: Buffer) => {
      this.output += c.toString();
    });
    this.child.stderr?.on('data', (c: Buffer) => {
      this.output += c.toString();
      this.stderr += c.toString();
    });
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }

  get url(): string {
    return `http://localhost:${this.port}`;
  }

  waitFor(pattern: RegExp, timeoutMs = 40_000): Promise<RegExpMatchArray> {
    return waitFor(`${pattern} in\n${this.output}`, () => this.output.match(pattern), timeoutMs);
  }

  /** Ctrl-C: SIGINT to the process group. */
  interrupt(): void {
    if (this.child.pid !== undefined && this.child.exitCode === null) process.kill(-this.child.pid, 'SIGINT');
  }

  /** Ctrl-C and the exit code; SIGKILL to the group if it hangs. */
  async stop(): Promise<number | null> {
    this.interrupt();
    const code = await Promise.race([this.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
    if (code === 'hung') {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
      return this.exited;
    }
    return code;
  }
}

const started: StartProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of started.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
});
afterAll(() => {
  for (const d of dirs) removeDir(d);
});

async function startOn(dataDir: string, port?: number): Promise<StartProcess> {
  const p = new StartProcess(dataDir, port ?? (await freePort()));
  started.push(p);
  return p;
}

/** A pid that surely belongs to no running process: one that just ran and exited. */
async function deadPid(): Promise<number> {
  const c = spawn('true');
  await new Promise((r) => c.on('exit', r));
  return c.pid as number;
}

describe('what tripped a new user: letkite start', () => {
  test('after a restart on another port the local agent follows the gateway to the new port', async () => {
    const data = tempDir('start-port');
    dirs.push(data);
    const first = await startOn(data);
    await first.waitFor(new RegExp(`connected to http://localhost:${first.port}/`));
    expect(await first.stop()).toBe(0);

    const second = await startOn(data);
    await second.waitFor(new RegExp(`connected to http://localhost:${second.port}/`));
    expect(second.output).toContain(`the local agent now dials http://localhost:${second.port}/`);
    const state = JSON.parse(readFileSync(join(data, 'agent', 'agent.json'), 'utf8')) as { gateway_url: string };
    expect(state.gateway_url).toBe(`http://localhost:${second.port}/`);
    expect(second.output).not.toMatch(new RegExp(`localhost:${first.port}/ .*reconnecting|ECONNREFUSED`));
    expect(await second.stop()).toBe(0);
  });

  test('a second start on the same data directory is refused and names who holds it; a stale lock is taken over', async () => {
    const data = tempDir('start-lock');
    dirs.push(data);
    const holder = await startOn(data);
    await holder.waitFor(/LetKite is running/);

    const second = await startOn(data);
    expect(await second.exited).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(
        `conflict: the data directory ${data} is in use by letkite start \\(pid ${holder.child.pid} on ${hostname()}, port ${holder.port},`,
      ),
    );
    // It stopped before touching anything: the holder's agent was never kicked off.
    expect(holder.output).not.toMatch(/disconnected|superseded|replaced/);
    expect(await holder.stop()).toBe(0);

    // A lock file left by a process that is gone (e.g. after a power cut) does not block the next start.
    const pid = await deadPid();
    writeFileSync(
      join(data, 'start.lock'),
      `${JSON.stringify({ pid, host: hostname(), port: 1, started_at: '2026-01-01T00:00:00.000Z' })}\n`,
    );
    const next = await startOn(data);
    await next.waitFor(/LetKite is running/);
    expect(next.output).toContain(`took over ${data} from pid ${pid}`);
    const lock = JSON.parse(readFileSync(join(data, 'start.lock'), 'utf8')) as { pid: number; port: number };
    expect(lock).toMatchObject({ pid: next.child.pid, port: next.port });
    expect(await next.stop()).toBe(0);
  });

  test('Ctrl-C with a job running exits 0 with no stack trace', async () => {
    const data = tempDir('start-sigint');
    dirs.push(data);
    const p = await startOn(data);
    const token = (await p.waitFor(/API token: (\S+)/))[1] as string;
    await p.waitFor(/connected to http:\/\/localhost/);
    const client = await mcpClient(p.url, token);
    try {
      const list = await callTool<{ machines: { name: string; online: boolean }[] }>(client, 'machines_list', {});
      const machine = list.data.machines[0]?.name as string;
      const job = await callTool<{ job_id: string; state: string }>(client, 'job_start', {
        machine,
        command: 'for i in $(seq 1 300); do echo tick $i; sleep 0.1; done',
      });
      expect(job.ok, JSON.stringify(job.error)).toBe(true);
      expect(job.data.state).toBe('running');
      // Let output flow into the job's log before the interrupt.
      await new Promise((r) => setTimeout(r, 800));
    } finally {
      await client.close().catch(() => {});
    }
    expect(await p.stop()).toBe(0);
    expect(p.stderr).not.toMatch(/EBADF|Uncaught|^\s+at .+:\d+:\d+\)?$/m);
    expect(p.stderr).not.toMatch(/unhandled|Error:/i);
  });
});

/** Runs a command to completion with its output. */
function run(
  cmd: string,
  args: string[],
  input: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    c.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    c.on('exit', (code) => resolve({ code, stdout, stderr }));
    c.stdin.end(input);
  });
}

/** `letkite ARGS…` as a command line (the node binary first), for running it under `unshare` or `runuser`. */
const letkite = (...args: string[]) => [process.execPath, '--import', 'tsx', cliMain, ...args];

/** `letkite agent join URL -` (the join token on stdin) keeping its state and `ceiling.toml` in `dir`. */
function joinArgs(url: string, dir: string, ...flags: string[]): string[] {
  return ['agent', 'join', url, '-', ...flags, '--state-dir', join(dir, 's'), '--ceiling', join(dir, 'ceiling.toml')];
}

const isRoot = process.getuid?.() === 0;
const canUnshare = isRoot && spawnSync('unshare', ['--mount', 'true']).status === 0;

describe('what tripped a new user: agent join and run_as', () => {
  let gw: TestGateway;
  afterAll(async () => {
    await gw?.dispose();
  });

  test.skipIf(!canUnshare)(
    'as root the join creates the letkite system account (no login shell, no home) and names it in the ceiling',
    async () => {
      gw ??= await TestGateway.start();
      const hostPasswd = readFileSync('/etc/passwd', 'utf8');
      const dir = tempDir('join-root');
      dirs.push(dir);
      // The host's accounts are never touched: useradd runs in a mount namespace where /etc is a copy without any
      // letkite account.
      const etc = join(dir, 'etc');
      spawnSync('cp', ['-a', '/etc', etc]);
      for (const f of ['passwd', 'group', 'shadow', 'gshadow']) {
        const path = join(etc, f);
        if (!existsSync(path)) continue;
        const kept = readFileSync(path, 'utf8')
          .split('\n')
          .filter((l) => !l.startsWith('letkite:'));
        writeFileSync(path, kept.join('\n'));
      }
      const ceiling = join(dir, 'ceiling.toml');
      const script = 'mount --bind "$0" /etc && exec "$@"';
      const args = letkite(...joinArgs(gw.url, dir, '--name', 'rootbox'));
      const r = await run(
        'unshare',
        ['--mount', '--propagation', 'private', 'sh', '-c', script, etc, ...args],
        await gw.joinToken(),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(
        'Commands run as "letkite": created it now as a system account (no login shell, no home).',
      );
      expect(readFileSync(ceiling, 'utf8')).toMatch(/^run_as = "letkite"/m);
      const entry = readFileSync(join(etc, 'passwd'), 'utf8')
        .split('\n')
        .find((l) => l.startsWith('letkite:'));
      const [, , uid, , , home, shell] = (entry ?? '').split(':');
      expect(Number(uid)).toBeLessThan(1000);
      expect(home).toBe('/nonexistent');
      expect(shell).toMatch(/nologin$|false$/);
      // The host's own account list is as it was.
      expect(readFileSync('/etc/passwd', 'utf8')).toBe(hostPasswd);
    },
  );

  test.skipIf(!isRoot)('as another user the join writes that user and says so', async () => {
    gw ??= await TestGateway.start();
    const dir = tempDir('join-user');
    dirs.push(dir);
    chownSync(dir, 65534, 65534);
    const ceiling = join(dir, 'ceiling.toml');
    const r = await run(
      'runuser',
      ['-u', 'nobody', '--', ...letkite(...joinArgs(gw.url, dir, '--name', 'userbox'))],
      await gw.joinToken(),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Commands run as you ("nobody")');
    expect(readFileSync(ceiling, 'utf8')).toMatch(/^run_as = "nobody"/m);
  });

  test('--run-as naming no account is refused before the join token is spent', async () => {
    gw ??= await TestGateway.start();
    const dir = tempDir('join-runas');
    dirs.push(dir);
    const token = await gw.joinToken();
    const bad = await runCliCommand(joinArgs(gw.url, dir, '--run-as', 'no-such-user-x'), {}, token);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid_params');
    // The same token still works.
    const ok = await runCliCommand(joinArgs(gw.url, dir, '--run-as', 'nobody'), {}, token);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readFileSync(join(dir, 'ceiling.toml'), 'utf8')).toMatch(/^run_as = "nobody"/m);
  });
});

describe('what tripped a new user: letkite mcp', () => {
  let gw: TestGateway;
  afterAll(async () => {
    await gw?.dispose();
  });

  test('requests piped right after initialize, in one write, are answered instead of dropped', async () => {
    gw = await TestGateway.start();
    const token = await gw.apiToken('bridge');
    const messages = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'machines_list', arguments: {} } },
    ];
    const bridge = spawn(process.execPath, ['--import', 'tsx', cliMain, 'mcp'], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1', LETKITE_URL: gw.url, LETKITE_TOKEN: token },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    bridge.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    bridge.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    // One write: the way a script or `cat requests.jsonl | letkite mcp` sends them.
    bridge.stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    const answers = await waitFor(
      `three answers; stdout:\n${stdout}\nstderr:\n${stderr}`,
      () => {
        const lines = stdout
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { id?: number; result?: Record<string, unknown>; error?: unknown });
        return lines.filter((l) => l.id !== undefined).length >= 3 ? lines : null;
      },
      60_000,
    );
    bridge.stdin.end();
    await new Promise((r) => bridge.on('exit', r));
    const byId = new Map(answers.map((a) => [a.id, a]));
    expect(byId.get(1)?.result).toHaveProperty('protocolVersion');
    expect(byId.get(2)?.error).toBeUndefined();
    expect(((byId.get(2)?.result?.tools ?? []) as { name: string }[]).map((t) => t.name)).toContain('machines_list');
    expect(byId.get(3)?.error).toBeUndefined();
    expect(byId.get(3)?.result).toHaveProperty('structuredContent.machines');
    expect(stderr).not.toMatch(/session id/i);
  });
});

describe('what tripped a new user: last seen', () => {
  let gw: TestGateway;
  afterAll(async () => {
    await gw?.dispose();
  });

  test('"last seen" moves with the heartbeats, not only at connect', async () => {
    // TestGateway pings every second; last seen is then written at most every 2 s.
    gw = await TestGateway.start();
    const agent = await gw.addAgent('beating');
    try {
      const { machine_id } = JSON.parse(readFileSync(join(agent.stateDir, 'agent.json'), 'utf8')) as {
        machine_id: string;
      };
      const lastSeen = async () => {
        const store = await openStore(join(gw.dataDir, 'letkite.db'));
        try {
          return Date.parse((await store.getMachine(machine_id))?.lastSeenAt ?? '');
        } finally {
          await store.close();
        }
      };
      const atConnect = await lastSeen();
      expect(atConnect).not.toBeNaN();
      await waitFor('a later last seen', async () => (await lastSeen()) >= atConnect + 2000, 20_000);
      // Still connected, and nothing but heartbeats went over the socket in between.
      expect(agent.process?.stderr).not.toMatch(/disconnected|reconnecting/);
    } finally {
      await agent.dispose();
    }
  });
});

describe('what tripped a new user: machine names', () => {
  let gw: TestGateway;
  afterAll(async () => {
    await gw?.dispose();
  });

  test('a second machine with a taken host name gets a suffix and is told; a taken --name is refused; an admin renames', async () => {
    gw = await TestGateway.start();
    const host = hostname().toLowerCase();
    const enroll = async (extra: string[], token?: string) => {
      const dir = tempDir('names');
      dirs.push(dir);
      return runCliCommand(joinArgs(gw.url, dir, '--run-as', 'nobody', ...extra), {}, token ?? (await gw.joinToken()));
    };
    const first = await enroll([]);
    expect(first.code, first.stderr).toBe(0);
    const second = await enroll([]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(new RegExp(`as "${host}-2"`, 'i'));
    expect(second.stdout).toContain('is already enrolled, so this one is');

    // A name chosen with --name that is taken is refused, and the token is still good for another name.
    const token = await gw.joinToken();
    const taken = await enroll(['--name', `${host}-2`], token);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('conflict');
    const other = await enroll(['--name', 'db-1'], token);
    expect(other.code, other.stderr).toBe(0);

    const list = await runCliCommand(['admin', 'machine', 'list'], gw.cliEnv);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows.map((r) => r[1]).sort()).toEqual([host, `${host}-2`, 'db-1'].sort());
    const secondId = rows.find((r) => r[1]?.toLowerCase() === `${host}-2`)?.[0] as string;

    const renamed = await runCliCommand(['admin', 'machine', 'rename', secondId, 'web-1'], gw.cliEnv);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toContain('to "web-1"');
    const clash = await runCliCommand(['admin', 'machine', 'rename', 'web-1', 'DB-1'], gw.cliEnv);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain('conflict');
    const bad = await runCliCommand(['admin', 'machine', 'rename', 'web-1', 'no spaces'], gw.cliEnv);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid_params');
    const after = await runCliCommand(['admin', 'machine', 'list'], gw.cliEnv);
    expect(after.stdout).toMatch(new RegExp(`^${secondId}\tweb-1\t`, 'm'));
  }, 400_000);
});
