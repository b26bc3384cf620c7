import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectNoProcessMatching, pause } from './support/leftover-processes';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir, waitFor } from './support/processes';

// A GitHub token shape (not a real token): the masking must catch it in every output an AI reads.
const FAKE_GITHUB_TOKEN = `ghp_${'A1b2C3d4E5'.repeat(3)}x9Y8z7`;

interface ExecResultShape {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}
interface ManyResult {
  results: { machine: string; name: string | null; ok: boolean; result?: ExecResultShape; error?: { code: string } }[];
  succeeded: number;
  failed: number;
}
interface ShellOut extends ExecResultShape {
  session_id: string;
  cwd: string | null;
  timed_out: boolean;
  session_ended: boolean;
  masked_count: number;
}
interface JobInfo {
  job_id: string;
  state: string;
  exit_code: number | null;
  output_bytes: number;
  note: string | null;
}
interface JobPage {
  offset: number;
  next_offset: number;
  data: string;
  eof: boolean;
  skipped_bytes: number;
  masked_count: number;
}

describe('exec_many, shell sessions and jobs through a real gateway and agents', () => {
  let gw: TestGateway;
  const agents: TestAgent[] = [];
  let token: string;
  let client: Client;
  const dirs: string[] = [];

  beforeAll(async () => {
    gw = await TestGateway.start();
    for (const name of ['m1', 'm2', 'm3']) agents.push(await gw.addAgent(name));
    token = await gw.apiToken();
    client = await mcpClient(gw.url, token);
  });

  afterAll(async () => {
    await client?.close();
    for (const a of agents) await a.dispose();
    await gw?.dispose();
    for (const d of dirs) removeDir(d);
  });

  test('tools/list shows the new tools with honest annotations', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['exec_many', 'shell_run', 'job_start', 'job_status', 'job_output', 'job_stop']) {
      expect(byName.has(name), name).toBe(true);
    }
    expect(byName.get('job_status')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('job_output')?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('job_stop')?.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
    // Every tool that runs a command can wait for a human: its output is the result or a pending approval.
    for (const [name, field] of [
      ['exec_many', 'results'],
      ['shell_run', 'session_id'],
      ['job_start', 'job_id'],
    ] as const) {
      const schema = (byName.get(name)?.outputSchema ?? {}) as {
        anyOf?: { properties?: Record<string, unknown> }[];
      };
      const shapes = schema.anyOf;
      expect(
        shapes?.some((s) => s.properties && field in s.properties),
        name,
      ).toBe(true);
      expect(
        shapes?.some((s) => s.properties && 'approval_id' in s.properties),
        name,
      ).toBe(true);
    }
    // Every tool's output schema also admits the refusal (strict clients validate structuredContent on errors too).
    const jobStatusShapes = (byName.get('job_status')?.outputSchema?.anyOf ?? []) as { properties?: object }[];
    expect(jobStatusShapes.some((s) => s.properties && 'job_id' in s.properties)).toBe(true);
    expect(jobStatusShapes.some((s) => s.properties && 'retryable' in s.properties)).toBe(true);
  });

  test('exec_many answers per machine: a stopped agent and an unknown name are errors of their own', async () => {
    await agents[2]?.stop();
    await machineOnline(client, 'm3', false);
    const progress: number[] = [];
    const r = await client.callTool(
      {
        name: 'exec_many',
        arguments: { machines: ['m1', 'm2', 'm3', 'nope'], command: 'echo "on $((20+22))"; exit 3', max_parallel: 2 },
      },
      undefined,
      { onprogress: (p) => progress.push(p.progress), timeout: 60_000 },
    );
    expect(r.isError).toBeFalsy();
    const data = r.structuredContent as unknown as ManyResult;
    expect(data.results.map((x) => [x.name ?? x.machine, x.ok])).toEqual([
      ['m1', true],
      ['m2', true],
      ['m3', false],
      ['nope', false],
    ]);
    expect(data.results[0]?.result).toMatchObject({ exit_code: 3, stdout: 'on 42\n' });
    expect(data.results[2]?.error?.code).toBe('machine_offline');
    expect(data.results[3]?.error?.code).toBe('machine_not_found');
    expect(data.failed).toBe(4);
    expect(progress).toEqual([1, 2, 3, 4]);
    await agents[2]?.start();
    await machineOnline(client, 'm3');
    const again = await callTool<ManyResult>(client, 'exec_many', { machines: ['m1', 'm2', 'm3'], argv: ['true'] });
    expect(again.data.succeeded).toBe(3);
  });

  test('exec_many applies the command rules on every machine', async () => {
    const r = await callTool<ManyResult>(client, 'exec_many', { machines: ['m1', 'm2'], command: 'rm -rf /' });
    expect(r.ok).toBe(true);
    expect(r.data.results.map((x) => x.error?.code)).toEqual(['blocked_by_policy', 'blocked_by_policy']);
  });

  test('a shell session keeps cd, exported variables and functions between calls', async () => {
    const dir = tempDir('sess');
    dirs.push(dir);
    const first = await callTool<ShellOut>(client, 'shell_run', {
      machine: 'm1',
      command: `cd ${dir} && export GREETING=hello && shout() { echo "$1!"; }`,
    });
    expect(first.ok).toBe(true);
    expect(first.data).toMatchObject({ exit_code: 0, cwd: dir, session_ended: false });
    const id = first.data.session_id;
    const second = await callTool<ShellOut>(client, 'shell_run', {
      machine: 'm1',
      session_id: id,
      command: 'pwd; printenv GREETING; shout hey',
    });
    expect(second.data).toMatchObject({ session_id: id, exit_code: 0, stdout: `${dir}\nhello\nhey!\n` });
    // A fresh session does not share that state.
    const other = await callTool<ShellOut>(client, 'shell_run', { machine: 'm1', command: 'echo "[$GREETING]"' });
    expect(other.data.stdout).toBe('[]\n');
    expect(other.data.session_id).not.toBe(id);
  });

  test('exit codes, output without a final newline, stderr, look-alike markers and secrets are delimited right', async () => {
    const s = await callTool<ShellOut>(client, 'shell_run', { machine: 'm2', command: 'true' });
    const id = s.data.session_id;
    const run = (command: string) =>
      callTool<ShellOut>(client, 'shell_run', { machine: 'm2', session_id: id, command });
    expect((await run('(exit 7)')).data.exit_code).toBe(7);
    const noNewline = await run("printf 'no newline'; printf 'err' >&2");
    expect(noNewline.data).toMatchObject({ stdout: 'no newline', stderr: 'err', exit_code: 0 });
    const fake = await run("printf '\\037LK:0123:0:1:/\\n'; echo after");
    expect(fake.data.stdout).toBe('\x1fLK:0123:0:1:/\nafter\n');
    // A command that does not parse never reaches the shell: parse errors are never "allow", they wait for a human.
    const unbalanced = await run('echo "unterminated');
    expect(unbalanced.error).toBeUndefined();
    expect((unbalanced.data as unknown as { status: string }).status).toBe('pending_approval');
    expect((await run('echo still alive')).data.stdout).toBe('still alive\n');
    const stdinRead = await run('cat; echo read-nothing');
    expect(stdinRead.data.stdout).toBe('read-nothing\n');
    const secret = await run(`echo token=${FAKE_GITHUB_TOKEN}`);
    expect(secret.data.stdout).not.toContain(FAKE_GITHUB_TOKEN);
    expect(secret.data.masked_count).toBe(1);
  });

  test('exit ends the session, a timeout ends it too, and an ended or foreign session is not_found', async () => {
    const s = await callTool<ShellOut>(client, 'shell_run', { machine: 'm1', command: 'exit 4' });
    expect(s.data).toMatchObject({ exit_code: 4, session_ended: true });
    const gone = await callTool(client, 'shell_run', { machine: 'm1', session_id: s.data.session_id, command: 'true' });
    expect(gone.error?.code).toBe('not_found');
    const slow = await callTool<ShellOut>(client, 'shell_run', { machine: 'm1', command: 'sleep 30', timeout_s: 1 });
    expect(slow.data).toMatchObject({ timed_out: true, session_ended: true, exit_code: null });
    const refused = await callTool(client, 'shell_run', { machine: 'm1', command: 'rm -rf /' });
    expect(refused.error?.code).toBe('blocked_by_policy');
    const otherToken = await gw.apiToken('other');
    const otherClient = await mcpClient(gw.url, otherToken);
    try {
      const mine = await callTool<ShellOut>(client, 'shell_run', { machine: 'm1', command: 'true' });
      const theirs = await callTool(otherClient, 'shell_run', {
        machine: 'm1',
        session_id: mine.data.session_id,
        command: 'true',
      });
      expect(theirs.error?.code).toBe('not_found');
    } finally {
      await otherClient.close();
    }
  });

  test("a job's output is read in pages across a gateway restart, masked", async () => {
    const started = await callTool<JobInfo>(client, 'job_start', {
      machine: 'm1',
      command: `for i in $(seq 1 3000); do echo "line $i"; done; echo "key=${FAKE_GITHUB_TOKEN}"; echo done >&2`,
    });
    expect(started.ok).toBe(true);
    expect(started.data.state).toBe('running');
    const id = started.data.job_id;
    await waitFor('job to finish', async () => {
      const s = await callTool<JobInfo>(client, 'job_status', { machine: 'm1', job_id: id });
      return s.data.state === 'exited' ? s : null;
    });
    const first = await callTool<JobPage>(client, 'job_output', { machine: 'm1', job_id: id, size: 4096 });
    expect(first.data.offset).toBe(0);
    expect(first.data.data.startsWith('line 1\nline 2\n')).toBe(true);
    expect(first.data.data.endsWith('\n')).toBe(true);
    expect(first.data.eof).toBe(false);

    await client.close();
    await gw.restart();
    client = await mcpClient(gw.url, token);
    for (const name of ['m1', 'm2', 'm3']) await machineOnline(client, name);

    let text = first.data.data;
    let offset = first.data.next_offset;
    let masked = 0;
    for (let i = 0; i < 100; i++) {
      const page = await callTool<JobPage>(client, 'job_output', { machine: 'm1', job_id: id, offset, size: 4096 });
      expect(page.ok).toBe(true);
      expect(page.data.offset).toBe(offset);
      text += page.data.data;
      masked += page.data.masked_count;
      offset = page.data.next_offset;
      if (page.data.eof) break;
    }
    const expected = `${Array.from({ length: 3000 }, (_, i) => `line ${i + 1}\n`).join('')}key=***\ndone\n`;
    expect(text).toBe(expected);
    expect(masked).toBe(1);
  });

  test('job_stop ends the whole process group with SIGTERM', async () => {
    const dir = tempDir('jobstop');
    dirs.push(dir);
    const started = await callTool<JobInfo>(client, 'job_start', {
      machine: 'm2',
      // The background child writes its marker 2 s in, after the stop below: only a group kill stops it.
      // `started` shows the job can write there at all, so a missing `child-survived` means something.
      command: `touch ${dir}/started; (sleep 2; touch ${dir}/child-survived) & sleep 60`,
    });
    expect(started.data.state).toBe('running');
    await waitFor('the job to start', () => existsSync(`${dir}/started`));
    const stopped = await callTool<JobInfo>(client, 'job_stop', { machine: 'm2', job_id: started.data.job_id });
    expect(stopped.data.state).toBe('stopped');
    const again = await callTool<JobInfo>(client, 'job_stop', { machine: 'm2', job_id: started.data.job_id });
    expect(again.data.state).toBe('stopped');
    await expectNoProcessMatching(client, 'm2', `sleep 2; touch ${dir}`);
    await pause(2500);
    expect(existsSync(`${dir}/child-survived`)).toBe(false);
  });

  test('after the agent is killed and restarted, a job that was running is lost, not running', async () => {
    const marker = tempDir('lost');
    dirs.push(marker);
    // A job that outlived its agent would write `finished` 4 s in; the check at the end waits past that.
    const startedAt = Date.now();
    const started = await callTool<JobInfo>(client, 'job_start', {
      machine: 'm3',
      command: `echo begun; sleep 4; touch ${marker}/finished`,
    });
    await waitFor('job output', async () => {
      const p = await callTool<JobPage>(client, 'job_output', { machine: 'm3', job_id: started.data.job_id });
      return p.data.data === 'begun\n';
    });
    await agents[2]?.stop('SIGKILL');
    await machineOnline(client, 'm3', false);
    await agents[2]?.start();
    await machineOnline(client, 'm3');
    const status = await callTool<JobInfo>(client, 'job_status', { machine: 'm3', job_id: started.data.job_id });
    expect(status.data.state).toBe('lost');
    expect(status.data.note).toMatch(/restarted/);
    const out = await callTool<JobPage>(client, 'job_output', { machine: 'm3', job_id: started.data.job_id });
    expect(out.data).toMatchObject({ data: 'begun\n', eof: true });
    await expectNoProcessMatching(client, 'm3', `sleep 4; touch ${marker}`);
    await pause(Math.max(0, startedAt + 6000 - Date.now()));
    expect(existsSync(`${marker}/finished`)).toBe(false);
  });

  test('jobs run under the command rules, and unknown job ids are not_found', async () => {
    const refused = await callTool(client, 'job_start', { machine: 'm1', command: 'mkfs.ext4 /dev/sda' });
    expect(refused.error?.code).toBe('blocked_by_policy');
    const unknown = await callTool(client, 'job_status', { machine: 'm1', job_id: 'job_doesnotexist' });
    expect(unknown.error?.code).toBe('not_found');
  });
});

describe('shell sessions in allowlist mode', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let client: Client;

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('locked', {
      ceiling: `${FULL_SHELL_CEILING}commands_mode = "allowlist"\n`,
    });
    client = await mcpClient(gw.url, await gw.apiToken());
  });

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
  });

  test('shell_run is unsupported where the ceiling forces allowlist mode', async () => {
    await waitFor('ceiling report', async () => {
      const r = await callTool<{ machines: { ceiling: { commands_mode?: string } | null }[] }>(
        client,
        'machines_list',
        {},
      );
      return r.data.machines[0]?.ceiling?.commands_mode === 'allowlist';
    });
    const r = await callTool(client, 'shell_run', { machine: 'locked', command: 'true' });
    expect(r.error?.code).toBe('unsupported');
  });
});

describe('sessions, jobs and terminals on a sandboxed machine', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let client: Client;
  const ceiling = `version = 1\nshell = "sandboxed"\nrun_as = "${userInfo().username}"\nfiles = [{ path = "/tmp", access = "rw" }]\ndeny = []\nterminals = true\n`;

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('boxed', { ceiling });
    client = await mcpClient(gw.url, await gw.apiToken());
  });

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
  });

  test('the session shell itself runs inside the sandbox: state persists, /etc stays unwritable', async () => {
    const probe = `/etc/letkite-sandbox-probe-${process.pid}`;
    const first = await callTool<ShellOut>(client, 'shell_run', {
      machine: 'boxed',
      command: `cd /tmp && export INSIDE=yes && touch ${probe}`,
    });
    expect(first.ok).toBe(true);
    expect(first.data.exit_code).not.toBe(0);
    expect(existsSync(probe)).toBe(false);
    const second = await callTool<ShellOut>(client, 'shell_run', {
      machine: 'boxed',
      session_id: first.data.session_id,
      command: 'echo "$INSIDE"; echo ok > "$TMPDIR/f" && cat "$TMPDIR/f"',
    });
    expect(second.data).toMatchObject({ exit_code: 0, stdout: 'yes\nok\n', cwd: '/tmp' });
  });

  test('a job runs inside the sandbox too', async () => {
    const probe = `/etc/letkite-job-probe-${process.pid}`;
    const started = await callTool<JobInfo>(client, 'job_start', { machine: 'boxed', command: `touch ${probe}` });
    const done = await waitFor('job end', async () => {
      const s = await callTool<JobInfo>(client, 'job_status', { machine: 'boxed', job_id: started.data.job_id });
      return s.data.state !== 'running' ? s.data : null;
    });
    expect(done.state).toBe('exited');
    expect(done.exit_code).not.toBe(0);
    expect(existsSync(probe)).toBe(false);
  });
});
