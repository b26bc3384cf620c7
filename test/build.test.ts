import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, RUN_AS } from './support/letkite';
import { freePort, removeDir, repoRoot, tempDir, waitFor } from './support/processes';

// Issue #13: `npm run build` compiles the apps, and the built `letkite` (bin/letkite → dist/cli/main.mjs) runs a
// gateway and an agent with plain Node: its migrations, web app, exec launcher, file worker and grammar are found
// next to the bundle. The other suites run the sources through tsx (test/support/processes.ts), so that eight
// people editing sources never test a stale build; this one tests the build.

const bin = join(repoRoot, 'bin/letkite');

/** bin/letkite as a process, with an environment free of loader flags (no tsx can sneak in through NODE_OPTIONS). */
class BuiltCli {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(args: string[], env: Record<string, string>, input?: string) {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS'));
    this.child = spawn(bin, args, { cwd: tmpdir(), env: { ...clean, NO_COLOR: '1', ...env } });
    this.child.stdout?.on('data', (c: Buffer) => {
      this.stdout += c.toString();
    });
    this.child.stderr?.on('data', (c: Buffer) => {
      this.stderr += c.toString();
    });
    this.child.stdin?.end(input);
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }

  waitForOutput(pattern: RegExp): Promise<RegExpMatchArray> {
    return waitFor(
      `${pattern}\n${this.stdout}\n${this.stderr}`,
      () => (this.stdout + this.stderr).match(pattern),
      30_000,
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5000))]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

async function run(args: string[], env: Record<string, string>, input?: string) {
  const p = new BuiltCli(args, env, input);
  const code = await p.exited;
  return { code, stdout: p.stdout, stderr: p.stderr };
}

beforeAll(() => {
  const r = spawnSync(process.execPath, ['tools/build/build.mjs', '--if-stale', '--keep-webapp'], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 300_000,
  });
  expect(r.stderr + r.stdout).toMatch(/build: .* ready/);
  expect(r.status).toBe(0);
}, 300_000);

describe('the built product', () => {
  const dirs: string[] = [];
  const procs: BuiltCli[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop();
    for (const d of dirs) removeDir(d);
  });

  test('the bundle carries no tsx and no TypeScript path', () => {
    const cli = join(repoRoot, 'dist/cli');
    const main = readdirSync(cli)
      .filter((f) => f.endsWith('.mjs'))
      .map((f) => readFileSync(join(cli, f), 'utf8'))
      .join('\n');
    expect(main).not.toMatch(/from ["']tsx/);
    // No path to a TypeScript source is left in code (esbuild's `// path.ts` comments aside).
    expect(main).not.toMatch(/["']\.\.?\/[\w/-]+\.ts["']/);
  });

  test('every bundle is ASCII-only (V8 keeps a script with one non-Latin-1 character as two bytes a character)', () => {
    for (const dir of ['dist/cli', 'dist/agent']) {
      for (const f of readdirSync(join(repoRoot, dir)).filter((name) => name.endsWith('.mjs'))) {
        const nonAscii = readFileSync(join(repoRoot, dir, f), 'utf8').match(/[^\x00-\x7f]/);
        expect(nonAscii, `${dir}/${f}`).toBeNull();
      }
    }
  });

  test('the standalone agent starts with its core only: every op group but exec is a chunk loaded on first use', () => {
    // Issue #13: V8 keeps each loaded script's source and parsing it leaves malloc memory behind, so what an idle
    // agent never runs must not be in the files its entry imports. esbuild marks each module with a `// path` line.
    const dir = join(repoRoot, 'dist/agent');
    const modulesOf = (file: string) =>
      [...readFileSync(join(dir, file), 'utf8').matchAll(/^\/\/ (\S+\.[cm]?[jt]s)$/gm)].map((m) => m[1] as string);
    const eager = new Set<string>();
    const pending = ['letkite-agent.mjs'];
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (eager.has(file)) continue;
      eager.add(file);
      const text = readFileSync(join(dir, file), 'utf8');
      for (const m of text.matchAll(/^import\s*(?:[^'"]*?from\s*)?["']\.\/([^"']+)["'];?$/gms))
        pending.push(m[1] as string);
    }
    const atStart = [...eager].flatMap(modulesOf);
    const all = readdirSync(dir)
      .filter((f) => f.endsWith('.mjs') && f !== 'file-worker.mjs')
      .flatMap(modulesOf);
    const lazy = [
      ...['sessions', 'jobs', 'terminals', 'files', 'gui', 'transfers', 'tunnels', 'wake'].map(
        (f) => `apps/agent/src/ops/features/${f}.ts`,
      ),
      ...['files', 'gui', 'jobs', 'shell', 'terminals', 'transfer', 'tunnel', 'wake'].map(
        (m) => `packages/protocol/src/ops-${m}.ts`,
      ),
      'apps/agent/src/jobs/job-manager.ts',
      'apps/agent/src/gui/gui-screen.ts',
      'apps/agent/src/transfers/send.ts',
    ];
    for (const m of lazy) {
      expect(all, m).toContain(m);
      expect(atStart, m).not.toContain(m);
    }
    expect(atStart).toContain('apps/agent/src/ops/features/exec.ts');
    // The gateway's registry and the MCP tool descriptors are not in the agent at all.
    expect(all.filter((m) => /protocol\/src\/(agent-ops|tools\/)/.test(m))).toEqual([]);
  });

  test('bin/letkite runs a gateway and an agent from dist/, and a command runs through MCP', async () => {
    const data = tempDir('built-gw');
    const agentDir = tempDir('built-agent');
    dirs.push(data, agentDir);
    const port = await freePort();
    const env = { LETKITE_DATA: data, LETKITE_PORT: String(port), LETKITE_HEARTBEAT_MS: '1000' };
    const gw = new BuiltCli(['gateway'], env);
    procs.push(gw);
    await gw.waitForOutput(/listening on/);
    const url = `http://localhost:${port}`;

    // The migrations (dist/cli/drizzle) were found and applied; the web app (dist/cli/webapp) is served.
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<script type="module"[^>]*src="\/assets\//);

    const joinToken = await run(['admin', 'join-token'], { LETKITE_DATA: data });
    expect(joinToken.code).toBe(0);
    // Only the data directory is given (as infra/README.md runs it): the install line names the address the gateway
    // recorded there, not the default port.
    expect(joinToken.stderr).toContain(`curl -fsSL ${url}/agent/install.sh | sudo sh -s -- `);
    const ceiling = join(agentDir, 'ceiling.toml');
    writeFileSync(ceiling, FULL_SHELL_CEILING);
    const agentEnv = { LETKITE_CEILING: ceiling, LETKITE_AGENT_STATE: agentDir };
    const joined = await run(
      ['agent', 'join', url, '-', '--name', 'built', ...RUN_AS],
      agentEnv,
      lastLine(joinToken.stdout),
    );
    expect(joined.stderr).toBe('');
    expect(joined.code).toBe(0);
    const agent = new BuiltCli(['agent', 'run'], agentEnv);
    procs.push(agent);
    await agent.waitForOutput(/connected to/);
    expect(readFileSync(`/proc/${agent.child.pid}/cmdline`, 'utf8').split('\0')).toContain(
      join(repoRoot, 'dist/cli/main.mjs'),
    );

    const apiToken = await run(['admin', 'token', 'create', '--name', 'built'], { LETKITE_DATA: data });
    expect(apiToken.code).toBe(0);
    const client = await mcpClient(url, apiToken.stdout.trim());
    try {
      await machineOnline(client, 'built');
      // exec goes through the launcher (dist/cli/letkite-launch); the command rules load the grammar (wasm).
      const r = await callTool(client, 'exec', { machine: 'built', command: 'echo built-$((40+2))' });
      expect(r.error).toBeUndefined();
      expect(r.data).toMatchObject({ exit_code: 0, stdout: 'built-42\n' });
      const note = join(data, '..', `${basename(agentDir)}-note.txt`);
      writeFileSync(note, 'read through the built agent\n');
      dirs.push(note);
      const file = await callTool(client, 'read_file', { machine: 'built', path: note });
      expect(file.error).toBeUndefined();
      expect(file.data).toMatchObject({ content: 'read through the built agent\n' });
    } finally {
      await client.close();
    }
  });
});

/** The join token is the last line on stdout (the command above it is for people). */
function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}
