/**
 * Issue #10 items 1, 4–7, 11c: an AI with an ordinary token tries to get out of the Linux sandbox
 * (`shell = "sandboxed"`, run_as = root, the worst case) through a real gateway and a real agent. Every test
 * performs the attack and checks its side effect (a marker file, a secret printed, a connection accepted, the
 * host's hostname and clock), not only the reply.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir, waitFor } from './support/processes';

interface ExecOut {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}
interface JobInfo {
  job_id: string;
  state: string;
}
interface JobPage {
  data: string;
  eof: boolean;
}

const PY = '/usr/bin/python3';
const unique = () => randomBytes(6).toString('hex');

describe('the Linux sandbox holds against an AI trying to get out (issue #10)', () => {
  let gw: TestGateway;
  let client: Client;
  let agent: TestAgent;
  let work: string;
  let outside: string;
  const agentMarker = `agent-env-${unique()}`;
  const homeSecretName = `.letkite-escape-${unique()}`;
  const homeSecretValue = `home-secret-${unique()}`;
  const dirs: string[] = [];

  beforeAll(async () => {
    gw = await TestGateway.start();
    client = await mcpClient(gw.url, await gw.apiToken());
    work = tempDir('escape-work');
    outside = tempDir('escape-outside');
    dirs.push(work, outside);
    mkdirSync(join(work, 'secret'));
    writeFileSync(join(work, 'secret', 'token.txt'), 'hidden-value-4711');
    writeFileSync(join(homedir(), homeSecretName), homeSecretValue, { mode: 0o600 });
    agent = await gw.addAgent('escape', {
      ceiling: [
        'version = 1',
        'shell = "sandboxed"',
        'run_as = "root"',
        'terminals = true',
        `files = [{ path = "${work}", access = "rw" }, { path = "*", access = "ro" }]`,
        `deny = ["${join(work, 'secret')}", "~"]`,
        '',
      ].join('\n'),
      env: { LETKITE_ESCAPE_MARKER: agentMarker },
    });
  });

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
    for (const d of dirs) removeDir(d);
    rmSync(join(homedir(), homeSecretName), { force: true });
  });

  const exec = (args: Record<string, unknown>) =>
    callTool<ExecOut>(client, 'exec', { machine: 'escape', timeout_s: 30, ...args });

  /** A Python script in the readable work tree (an inline `python3 -c` waits for a human approval by default). */
  function script(code: string): string {
    const path = join(work, `s-${unique()}.py`);
    writeFileSync(path, code);
    return `${PY} ${path}`;
  }

  async function jobOutput(args: Record<string, unknown>): Promise<{ ok: boolean; text: string; code?: string }> {
    const started = await callTool<JobInfo>(client, 'job_start', { machine: 'escape', ...args });
    if (!started.ok) return { ok: false, text: '', code: started.error?.code };
    let text = '';
    await waitFor('the job to finish', async () => {
      const page = await callTool<JobPage>(client, 'job_output', {
        machine: 'escape',
        job_id: started.data.job_id,
        size: 60000,
      });
      if (!page.ok) throw new Error(JSON.stringify(page.error));
      text = page.data.data;
      return page.data.eof;
    });
    return { ok: true, text };
  }

  describe('1: the request environment never reaches the helper', () => {
    let lib: string;
    beforeAll(() => {
      const src = join(work, 'evil.c');
      lib = join(work, 'evil.so');
      writeFileSync(
        src,
        `#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void evil(void) {\n` +
          `  const char *m = getenv("EVIL_MARKER"); if (!m) return;\n` +
          `  FILE *f = fopen(m, "a"); if (f) { fputs("pwned\\n", f); fclose(f); }\n}\n`,
      );
      execFileSync('cc', ['-shared', '-fPIC', '-o', lib, src]);
    });

    test('exec with LD_PRELOAD: the .so never runs outside the sandbox (no marker outside the grants)', async () => {
      const marker = join(outside, `exec-${unique()}`);
      const r = await exec({ command: 'echo ran', env: { LD_PRELOAD: lib, EVIL_MARKER: marker } });
      expect(existsSync(marker), JSON.stringify(r)).toBe(false);
      if (r.ok) expect(r.data.exit_code).not.toBe(0);
    });

    test('job_start with LD_PRELOAD: no marker outside the grants', async () => {
      const marker = join(outside, `job-${unique()}`);
      await jobOutput({ command: 'echo ran', env: { LD_PRELOAD: lib, EVIL_MARKER: marker } });
      expect(existsSync(marker)).toBe(false);
    });

    test('the other loader variables are refused as well (GCONV_PATH, LD_LIBRARY_PATH, GLIBC_TUNABLES)', async () => {
      for (const env of [{ LD_LIBRARY_PATH: work }, { GCONV_PATH: work }, { GLIBC_TUNABLES: 'glibc.malloc.check=3' }]) {
        const r = await exec({ command: 'echo ran', env });
        const ran = r.ok && r.data.stdout.includes('ran') && r.data.exit_code === 0;
        expect(ran, JSON.stringify({ env, r })).toBe(false);
      }
    });

    test('an ordinary variable still reaches the command, and only inside the sandbox', async () => {
      const r = await exec({ command: 'echo "[$GREETING]"; touch /etc/x-$GREETING', env: { GREETING: 'hello' } });
      expect(r.data.stdout).toBe('[hello]\n');
      expect(existsSync('/etc/x-hello')).toBe(false);
    });
  });

  describe('4: a cwd inside a denied directory sees the hiding', () => {
    test('exec', async () => {
      const r = await exec({ command: 'cat token.txt; ls -A', cwd: join(work, 'secret') });
      expect(JSON.stringify(r)).not.toContain('hidden-value-4711');
      expect(JSON.stringify(r)).not.toContain('token.txt"');
    });

    test('job_start', async () => {
      const r = await jobOutput({ command: 'cat token.txt', cwd: join(work, 'secret') });
      expect(r.text).not.toContain('hidden-value-4711');
    });

    test('shell_run: a session that starts in a denied home sees the hiding, not the files', async () => {
      // The ceiling denies "~" (/root for run_as root): the session starts there by default.
      const r = await callTool<ExecOut>(client, 'shell_run', {
        machine: 'escape',
        command: `cat ${homeSecretName}; cd ${join(work, 'secret')} && cat token.txt`,
      });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      expect(JSON.stringify(r)).not.toContain(homeSecretValue);
      expect(JSON.stringify(r)).not.toContain('hidden-value-4711');
    });

    test('terminal_open', async () => {
      const opened = await callTool<{ terminal_id: string }>(client, 'terminal_open', {
        machine: 'escape',
        cwd: join(work, 'secret'),
      });
      if (!opened.ok) return; // refused: nothing to read
      const id = opened.data.terminal_id;
      try {
        await callTool(client, 'terminal_send', {
          machine: 'escape',
          terminal_id: id,
          text: 'cat token.txt; echo END-$((6*7))',
          submit: true,
        });
        const waited = await callTool<{ matched: boolean; screen?: string }>(client, 'terminal_wait', {
          machine: 'escape',
          terminal_id: id,
          pattern: 'END-42',
          timeout_s: 10,
        });
        expect(waited.data.matched).toBe(true);
        const read = await callTool(client, 'terminal_read', { machine: 'escape', terminal_id: id });
        expect(JSON.stringify(read)).not.toContain('hidden-value-4711');
      } finally {
        await callTool(client, 'terminal_close', { machine: 'escape', terminal_id: id });
      }
    });

    test('a cwd that exists only on the host (under the hidden dir) gives a clear error, not "command not found"', async () => {
      mkdirSync(join(work, 'secret', 'sub'), { recursive: true });
      const r = await exec({ command: 'echo ran', cwd: join(work, 'secret', 'sub') });
      expect(JSON.stringify(r)).not.toContain('ran\\n');
      expect(JSON.stringify(r)).not.toMatch(/command not found/);
      expect(JSON.stringify(r)).toMatch(/working directory/);
    });
  });

  describe('5: pathname Unix sockets outside the grants are unreachable', () => {
    let server: Server;
    let path: string;
    let accepted = 0;
    beforeAll(async () => {
      path = join(outside, 'srv.sock');
      server = createServer((s) => {
        accepted++;
        s.end('hello-from-outside\n');
      });
      await new Promise<void>((resolve) => server.listen(path, resolve));
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test('a socket the test serves outside the grants', async () => {
      const r = await exec({
        command: script(`import socket\ns=socket.socket(socket.AF_UNIX)\ns.connect('${path}')\nprint(s.recv(100))\n`),
      });
      expect(r.data.stdout, JSON.stringify(r)).not.toContain('hello-from-outside');
      expect(accepted).toBe(0);
    });

    test('the real PostgreSQL socket: no COPY … TO PROGRAM outside the sandbox', async () => {
      if (!existsSync('/var/run/postgresql/.s.PGSQL.5432')) return;
      const marker = join(tmpdir(), `letkite-pg-${unique()}`);
      const r = await exec({
        command: `psql -h /var/run/postgresql -U postgres -d postgres -c "COPY (SELECT 1) TO PROGRAM 'touch ${marker}'"`,
      });
      expect(existsSync(marker), JSON.stringify(r)).toBe(false);
    });

    test('socketpair (anonymous) still works for the programs that need it', async () => {
      const r = await exec({
        command: script("import socket\na,b=socket.socketpair()\na.send(b'ok')\nprint(b.recv(2))\n"),
      });
      expect(r.data.stdout).toBe("b'ok'\n");
    });
  });

  describe('6: no network without a granted tunnel target', () => {
    let udp: UdpSocket;
    let port: number;
    let received = 0;
    beforeAll(async () => {
      udp = createSocket('udp4');
      udp.on('message', () => {
        received++;
      });
      await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
      port = udp.address().port;
    });
    afterAll(() => udp.close());

    test('a UDP datagram to a local listener is not received', async () => {
      const r = await exec({
        command: script(
          `import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', ('127.0.0.1', ${port}))\nprint('sent')\n`,
        ),
      });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(received).toBe(0);
    });

    test('a raw socket is refused', async () => {
      const r = await exec({
        command: script(
          "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)\nprint('raw-open')\n",
        ),
      });
      expect(r.data.stdout, JSON.stringify(r)).toBe('');
      expect(r.data.stderr).toMatch(/PermissionError/);
    });
  });

  describe('7: root inside the sandbox has no capabilities and cannot see the agent', () => {
    test('CapEff, CapPrm, CapBnd and CapAmb are all zero with run_as = root', async () => {
      const r = await exec({ command: 'grep -E "^Cap(Eff|Prm|Bnd|Amb|Inh)" /proc/self/status; id -u' });
      expect(r.data.stdout).toBe(
        'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n0\n',
      );
    });

    test('hostname and date -s fail and leave the host unchanged', async () => {
      const before = hostname();
      const r = await exec({ command: 'hostname escaped-host; date -s "2001-01-01 00:00:00"; echo done' });
      expect(r.data.stdout).toContain('done');
      expect(r.data.stderr).toMatch(/hostname|Operation not permitted/);
      expect(hostname()).toBe(before);
      expect(new Date().getFullYear()).toBeGreaterThan(2020);
    });

    test("the agent's /proc/<pid>/environ (and every other process's) is out of reach", async () => {
      const pid = agent.process?.child.pid;
      const r = await exec({
        command: `cat /proc/${pid}/environ; cat /proc/[0-9]*/environ; echo; ls /proc | grep -c '^[0-9]'`,
      });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      expect(JSON.stringify(r)).not.toContain(agentMarker);
      // Only the sandbox's own few processes are visible.
      expect(Number(r.data.stdout.trim().split('\n').pop())).toBeLessThan(10);
    });
  });

  describe('11: a run_as account without a home (nobody: /nonexistent)', () => {
    let nohome: TestAgent;
    beforeAll(async () => {
      nohome = await gw.addAgent('nohome', {
        ceiling: [
          'version = 1',
          'shell = "sandboxed"',
          'run_as = "nobody"',
          'terminals = true',
          'files = [{ path = "*", access = "ro" }]',
          '',
        ].join('\n'),
      });
    });
    afterAll(async () => {
      await nohome?.dispose();
    });

    test('exec, job_start, shell_run and terminal_open run (in /), with no misleading "command not found"', async () => {
      const e = await callTool<ExecOut>(client, 'exec', { machine: 'nohome', command: 'id -u; pwd' });
      expect(e.data, JSON.stringify(e)).toMatchObject({ exit_code: 0, stdout: '65534\n/\n' });

      const started = await callTool<JobInfo>(client, 'job_start', { machine: 'nohome', command: 'echo job-ran; pwd' });
      expect(started.ok, JSON.stringify(started)).toBe(true);
      let text = '';
      await waitFor('the job to finish', async () => {
        const page = await callTool<JobPage>(client, 'job_output', {
          machine: 'nohome',
          job_id: started.data.job_id,
          size: 60000,
        });
        text = page.data.data ?? '';
        return page.data.eof;
      });
      expect(text).toBe('job-ran\n/\n');

      const sh = await callTool<ExecOut>(client, 'shell_run', { machine: 'nohome', command: 'echo shell-ran' });
      expect(sh.data, JSON.stringify(sh)).toMatchObject({ exit_code: 0, stdout: 'shell-ran\n' });

      const t = await callTool<{ terminal_id: string; exited: boolean; text?: string }>(client, 'terminal_open', {
        machine: 'nohome',
      });
      expect(t.ok, JSON.stringify(t)).toBe(true);
      expect(JSON.stringify(t)).not.toMatch(/command not found/);
      await callTool(client, 'terminal_send', {
        machine: 'nohome',
        terminal_id: t.data.terminal_id,
        text: 'echo TERM-$((6*7))',
        submit: true,
      });
      const waited = await callTool<{ matched: boolean }>(client, 'terminal_wait', {
        machine: 'nohome',
        terminal_id: t.data.terminal_id,
        pattern: 'TERM-42',
        timeout_s: 10,
      });
      expect(waited.data.matched).toBe(true);
      await callTool(client, 'terminal_close', { machine: 'nohome', terminal_id: t.data.terminal_id });
    });
  });

  test('the ordinary work still works: read the tree, write the rw grant', async () => {
    const r = await exec({ command: `ls ${work} >/dev/null && echo ok > ${work}/out.txt && cat ${work}/out.txt` });
    expect(r.data).toMatchObject({ exit_code: 0, stdout: 'ok\n' });
  });
});
