import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, TestGateway } from './support/letkite';
import { buildIfStale, removeDir, repoRoot, tempDir, waitFor } from './support/processes';

// Issue #13: the one-line install. The gateway serves the packed agent and install.sh; the script, run as root
// with temp paths and --no-systemctl (there is no systemd as PID 1 here; test/agent-systemd.test.ts runs it
// under a real one), refuses a tampered download and installs nothing, then installs, writes the unit and the
// default ceiling and joins. The installed agent is started exactly as the written unit's ExecStart and
// Environment= lines say, on plain Node, outside the checkout (no NODE_PATH, no node_modules above it): it comes
// online, runs a command, and after a kill and a start comes back.

const isRoot = process.getuid?.() === 0;
const platform = `${process.platform}-${process.arch}`;

/**
 * Runs install.sh as `sh -s -- ARGS` with the script on standard input, as `curl … | sudo sh -s -- …` does.
 * Asynchronous: the tampering proxy below runs on this process's event loop.
 */
function runInstaller(
  script: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('sh', ['-s', '--', ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/root', LANG: 'C.UTF-8' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdin.end(script);
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** A proxy in front of the gateway that flips one byte of every agent download (a tampered mirror or network). */
async function tamperingProxy(target: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const upstream = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (up) => {
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.url?.startsWith('/agent/download/') && body.length > 100) {
          const at = body.length >> 1;
          body.writeUInt8((body.readUInt8(at) ^ 0x01) & 0xff, at);
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        res.end(body);
      });
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The unit's ExecStart argv and Environment= variables. */
function parseUnit(text: string): { argv: string[]; env: Record<string, string> } {
  const lines = text.split('\n');
  const exec = lines.find((l) => l.startsWith('ExecStart='));
  const env = Object.fromEntries(
    lines
      .filter((l) => l.startsWith('Environment='))
      .map((l) => {
        const kv = l.slice('Environment='.length);
        const eq = kv.indexOf('=');
        return [kv.slice(0, eq), kv.slice(eq + 1)];
      }),
  );
  return { argv: (exec ?? '').slice('ExecStart='.length).split(' '), env };
}

/** Starts the agent as systemd would from the unit: its argv, its Environment= lines, PATH, nothing else. */
function startAsUnit(unit: { argv: string[]; env: Record<string, string> }, cwd: string) {
  const [cmd, ...args] = unit.argv;
  const child: ChildProcess = spawn(cmd as string, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...unit.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { text: '' };
  child.stdout?.on('data', (c: Buffer) => {
    out.text += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out.text += c.toString();
  });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return { child, out, exited };
}

describe.skipIf(!isRoot)('the one-line agent install', () => {
  let gw: TestGateway;
  let client: Client;
  let root: string;
  let script: string;
  const stops: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    const b = buildIfStale('agent', 300_000);
    expect(b.status, b.stderr).toBe(0);
    gw = await TestGateway.start();
    stops.push(() => gw.dispose());
    client = await mcpClient(gw.url, await gw.apiToken());
    stops.push(() => client.close());
    // Outside the checkout, with no node_modules anywhere above it.
    root = tempDir('install');
    stops.push(() => removeDir(root));
    for (let d = root; d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules'))).toBe(false);
    const res = await fetch(`${gw.url}/agent/install.sh`);
    expect(res.headers.get('content-type')).toMatch(/shellscript/);
    script = await res.text();
  }, 300_000);

  afterAll(async () => {
    for (const s of stops.reverse()) await s();
  });

  const paths = () => ({
    prefix: join(root, 'opt/letkite'),
    config: join(root, 'etc/letkite'),
    state: join(root, 'var/lib/letkite'),
    units: join(root, 'etc/systemd/system'),
  });
  const flags = () => {
    const p = paths();
    return [
      '--prefix',
      p.prefix,
      '--config-dir',
      p.config,
      '--state-dir',
      p.state,
      '--unit-dir',
      p.units,
      '--no-systemctl',
      '--no-account',
    ];
  };

  test('the download carries its SHA-256, the same one install.sh was written with', async () => {
    const res = await fetch(`${gw.url}/agent/download/${platform}`);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    const { createHash } = await import('node:crypto');
    const sum = createHash('sha256').update(bytes).digest('hex');
    expect(res.headers.get('x-letkite-sha256')).toBe(sum);
    expect(script).toContain(`${platform}) echo ${sum} ;;`);
    const missing = await fetch(`${gw.url}/agent/download/plan9-mips`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const bad = await fetch(`${gw.url}/agent/download/..%2F..%2Fetc`);
    expect(bad.status).toBe(400);
  });

  test('a download with one byte changed is refused and nothing is installed', async () => {
    const proxy = await tamperingProxy(gw.url);
    try {
      const viaProxy = script.replace(/^GATEWAY_URL=.*$/m, `GATEWAY_URL='${proxy.url}'`);
      expect(viaProxy).not.toBe(script);
      const r = await runInstaller(viaProxy, [...flags(), await gw.joinToken()]);
      expect(r.stderr).toMatch(/refusing the download: its SHA-256 is [0-9a-f]{64}, the gateway said [0-9a-f]{64}/);
      expect(r.code).not.toBe(0);
      const p = paths();
      for (const d of [p.prefix, p.config, p.state, p.units]) expect(existsSync(d)).toBe(false);
    } finally {
      proxy.server.close();
    }
  });

  test('install.sh refuses a gateway that is neither https nor on this machine', async () => {
    const r = await runInstaller(script.replace(/^GATEWAY_URL=.*$/m, "GATEWAY_URL='http://gateway.example.com'"), [
      ...flags(),
      'lkj_x',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/is not https/);
    expect(existsSync(paths().prefix)).toBe(false);
  });

  // Only where systemd is not PID 1 (as here): elsewhere this run would go on to call the host's systemctl.
  test.skipIf(existsSync('/run/systemd/system'))(
    'without --no-systemctl and no systemd running, install.sh stops before installing or joining',
    async () => {
      const r = await runInstaller(script, [...flags().filter((f) => f !== '--no-systemctl'), await gw.joinToken()]);
      expect(r.stderr).toMatch(/systemd is not running on this machine .*--no-systemctl.* Nothing was installed/);
      expect(r.code).not.toBe(0);
      const p = paths();
      for (const d of [p.prefix, p.config, p.state, p.units]) expect(existsSync(d)).toBe(false);
    },
  );

  test('installs, joins, runs as its unit says, and survives a kill and a restart', async () => {
    const p = paths();
    const token = await gw.joinToken();
    const r = await runInstaller(script, [...flags(), '--name', 'installed', token]);
    expect(r.stderr).toMatch(/installed the agent to/);
    expect(r.code).toBe(0);
    // The token went to the join on standard input, never into a file or the unit.
    for (const f of readdirRecursive(root)) expect(readFileSync(f).includes(token)).toBe(false);

    const manifest = JSON.parse(readFileSync(join(p.prefix, 'agent/manifest.json'), 'utf8'));
    expect(manifest.platform).toBe(platform);
    expect(Object.keys(manifest.files)).toEqual(
      expect.arrayContaining([
        'letkite-agent.mjs',
        'letkite-launch',
        `prebuilds/${platform}/pty.node`,
        // The command rules evaluate a fresh copy per parser, so an idle agent can let the grammar go.
        'web-tree-sitter.cjs',
      ]),
    );
    const defaults = readFileSync(join(p.config, 'ceiling.toml'), 'utf8');
    expect(defaults).toMatch(/^#/m);
    expect(defaults).toMatch(/^run_as = "letkite"/m);
    expect(existsSync(join(p.state, 'agent.json'))).toBe(true);
    const unitText = readFileSync(join(p.units, 'letkite-agent.service'), 'utf8');
    const unit = parseUnit(unitText);
    expect(unit.argv).toEqual([join(p.prefix, 'bin/letkite'), 'agent', 'run']);
    expect(unit.env).toMatchObject({
      LETKITE_AGENT_STATE: p.state,
      LETKITE_CEILING: join(p.config, 'ceiling.toml'),
    });

    // This test runs commands as its own account (there is no "letkite" account here and it must not make one).
    writeFileSync(
      join(p.config, 'ceiling.toml'),
      FULL_SHELL_CEILING.replace(/run_as = ".*"/, `run_as = "${userInfo().username}"`),
    );

    const cwd = tempDir('install-run');
    stops.push(() => removeDir(cwd));
    let agent = startAsUnit(unit, cwd);
    stops.push(() => void agent.child.kill('SIGKILL'));
    await waitFor(
      `the installed agent connects\n${agent.out.text}`,
      () => agent.out.text.includes('connected to'),
      30_000,
    );
    await machineOnline(client, 'installed');
    const first = await callTool(client, 'exec', { machine: 'installed', command: 'echo from-the-install' });
    expect(first.error).toBeUndefined();
    expect(first.data).toMatchObject({ exit_code: 0, stdout: 'from-the-install\n' });
    // Each group of ops besides exec is a chunk of the bundle, imported on its first request (issue #13): the
    // installed agent finds and loads them from its own directory.
    const listed = await callTool<{ entries: { name: string }[] }>(client, 'list_dir', {
      machine: 'installed',
      path: cwd,
    });
    expect(listed.error).toBeUndefined();
    const shell = await callTool(client, 'shell_run', { machine: 'installed', command: 'echo in-a-session' });
    expect(shell.error).toBeUndefined();
    expect(shell.data).toMatchObject({ stdout: 'in-a-session\n' });
    const job = await callTool<{ job_id: string }>(client, 'job_start', { machine: 'installed', command: 'true' });
    expect(job.error).toBeUndefined();
    const status = await callTool(client, 'job_status', { machine: 'installed', job_id: job.data?.job_id });
    expect(status.error).toBeUndefined();
    const term = await callTool<{ terminal_id: string }>(client, 'terminal_open', { machine: 'installed' });
    expect(term.error).toBeUndefined();
    const closed = await callTool(client, 'terminal_close', {
      machine: 'installed',
      terminal_id: term.data?.terminal_id,
    });
    expect(closed.data).toMatchObject({ closed: true });
    // Nothing of the checkout is loaded: the agent runs from the installed files alone.
    const maps = readFileSync(`/proc/${agent.child.pid}/maps`, 'utf8');
    expect(maps).not.toContain(repoRoot);
    expect(readFileSync(`/proc/${agent.child.pid}/cmdline`, 'utf8')).toContain(
      join(p.prefix, 'agent/letkite-agent.mjs'),
    );

    agent.child.kill('SIGKILL');
    await agent.exited;
    await machineOnline(client, 'installed', false);
    agent = startAsUnit(unit, cwd);
    await waitFor(`the agent connects again\n${agent.out.text}`, () => agent.out.text.includes('connected to'), 30_000);
    await machineOnline(client, 'installed');
    const again = await callTool(client, 'exec', { machine: 'installed', command: 'echo after-the-restart' });
    expect(again.data).toMatchObject({ exit_code: 0, stdout: 'after-the-restart\n' });

    // A second run changes nothing: same build, same unit, the edited ceiling kept, no second join (no token).
    const ceilingBefore = readFileSync(join(p.config, 'ceiling.toml'), 'utf8');
    const second = await runInstaller(script, flags());
    expect(second.stderr).toMatch(/this build already/);
    expect(second.stderr).toMatch(/joined already/);
    expect(second.code).toBe(0);
    expect(readFileSync(join(p.units, 'letkite-agent.service'), 'utf8')).toBe(unitText);
    expect(readFileSync(join(p.config, 'ceiling.toml'), 'utf8')).toBe(ceilingBefore);
    agent.child.kill('SIGTERM');
    await agent.exited;
  });
});

function readdirRecursive(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? readdirRecursive(p) : e.isFile() ? [p] : [];
  });
}
