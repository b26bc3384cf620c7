import { existsSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, FULL_SHELL_CEILING, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir, waitFor } from './support/processes';

const FAKE_GITHUB_TOKEN = `ghp_${'Q7w8E9r0T1'.repeat(3)}y2U3i4`;

interface Opened {
  terminal_id: string;
  title: string;
  host: string;
  cols: number;
  rows: number;
}
interface Screen {
  text: string;
  alternate_screen: boolean;
  title: string;
  masked_count: number;
}
interface Waited {
  matched: boolean;
  match: string | null;
  context: string;
}

describe('terminals through a real gateway and agent', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let client: Client;
  let term: string;
  const dirs: string[] = [];

  const send = (args: Record<string, unknown>) =>
    callTool(client, 'terminal_send', { machine: 'tty', terminal_id: term, ...args });
  const read = (mode: 'visible' | 'recent', extra: Record<string, unknown> = {}) =>
    callTool<Screen>(client, 'terminal_read', { machine: 'tty', terminal_id: term, mode, ...extra });
  const wait = (pattern: string, extra: Record<string, unknown> = {}) =>
    callTool<Waited>(client, 'terminal_wait', { machine: 'tty', terminal_id: term, pattern, timeout_s: 10, ...extra });

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('tty', { ceiling: `${FULL_SHELL_CEILING}terminals = true\n` });
    client = await mcpClient(gw.url, await gw.apiToken());
    const opened = await callTool<Opened>(client, 'terminal_open', { machine: 'tty', cols: 100, rows: 30 });
    expect(opened.ok).toBe(true);
    term = opened.data.terminal_id;
    // A prompt that is easy to wait for.
    await send({ text: "PS1='READY> '", submit: true });
    expect((await wait('READY> ', { from: 'last_send' })).data.matched).toBe(true);
  });

  afterAll(async () => {
    await callTool(client, 'terminal_close', { machine: 'tty', terminal_id: term }).catch(() => {});
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
    for (const d of dirs) removeDir(d);
  });

  test('terminal_open names the terminal, its title and host', async () => {
    const t = await callTool<Opened>(client, 'terminal_open', { machine: 'tty', cols: 80, rows: 24 });
    expect(t.data).toMatchObject({ cols: 80, rows: 24 });
    expect(t.data.terminal_id).toMatch(/^term_/);
    expect(t.data.host.length).toBeGreaterThan(0);
    expect(t.data.title.length).toBeGreaterThan(0);
    const closed = await callTool(client, 'terminal_close', { machine: 'tty', terminal_id: t.data.terminal_id });
    expect(closed.data).toEqual({ closed: true });
    const gone = await callTool(client, 'terminal_read', { machine: 'tty', terminal_id: t.data.terminal_id });
    expect(gone.error?.code).toBe('not_found');
  });

  test('vi on the alternate screen is read as rendered in visible mode', async () => {
    const dir = tempDir('vi');
    dirs.push(dir);
    await send({ text: `vi ${dir}/notes.txt`, submit: true });
    await waitFor('alternate screen', async () => (await read('visible')).data.alternate_screen);
    await send({ text: 'ihello from vi', keys: ['Escape'] });
    const screen = await waitFor('typed text on screen', async () => {
      const s = await read('visible');
      return s.data.text.includes('hello from vi') ? s.data : null;
    });
    expect(screen.alternate_screen).toBe(true);
    const lines = screen.text.split('\n');
    expect(lines[0]).toBe('hello from vi');
    // vi marks the lines past the end of the file with ~.
    expect(lines.filter((l) => l === '~').length).toBeGreaterThan(10);
    await send({ text: ':wq', keys: ['Enter'] });
    await waitFor('back on the normal screen', async () => !(await read('visible')).data.alternate_screen);
    await send({ text: `cat ${dir}/notes.txt`, submit: true });
    expect((await wait('hello from vi')).data.matched).toBe(true);
  });

  test('a paste carrying its own end-of-paste marker does not run the following line', async () => {
    const dir = tempDir('paste');
    dirs.push(dir);
    // Were the marker left in, the paste would end after "echo one" and both lines would run at their CRs.
    const r = await send({ text: `echo one\x1b[201~\ntouch ${dir}/pwned\n`, paste: 'always' });
    expect(r.data).toMatchObject({ pasted: true });
    // Give the shell time to act on it, if it were going to.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(existsSync(`${dir}/pwned`)).toBe(false);
    const screen = await read('visible');
    expect(screen.data.text).toContain(`touch ${dir}/pwned`);
    await send({ keys: ['C-c'] });
    await send({ text: 'echo after-paste', submit: true });
    expect((await wait('READY> echo after-paste\nafter-paste')).data.matched).toBe(true);
    expect(existsSync(`${dir}/pwned`)).toBe(false);
  });

  test('terminal_wait finds output that already scrolled off the screen', async () => {
    await send({ text: 'echo FIRST-$((40+2)); seq 1 3000; echo LAST-$((1+1))', submit: true });
    expect((await wait('LAST-2')).data.matched).toBe(true);
    const visible = await read('visible');
    expect(visible.data.text).not.toContain('FIRST-42');
    const found = await wait('FIRST-\\d+', { regex: true });
    expect(found.data).toMatchObject({ matched: true, match: 'FIRST-42', context: 'FIRST-42' });
    const recent = await read('recent', { lines: 5 });
    expect(recent.data.text.split('\n')).toHaveLength(5);
  });

  test('terminal text is masked, and terminal_wait cannot confirm a secret it does not show', async () => {
    await send({ text: `echo "token=${FAKE_GITHUB_TOKEN}"`, submit: true });
    expect((await wait('token=***')).data.matched).toBe(true);
    const probe = await wait(FAKE_GITHUB_TOKEN.slice(0, 12), { timeout_s: 1 });
    expect(probe.data.matched).toBe(false);
    const screen = await read('recent');
    expect(screen.data.text).not.toContain(FAKE_GITHUB_TOKEN);
    expect(screen.data.masked_count).toBeGreaterThan(0);
  });

  test('named keys: history with Up, and an unknown key is invalid_params', async () => {
    await send({ text: 'echo hist-$((3*3))', submit: true });
    expect((await wait('hist-9')).data.matched).toBe(true);
    await send({ keys: ['Up', 'Enter'] });
    const twice = await waitFor('second run', async () => {
      const s = await read('recent', { lines: 50 });
      return (s.data.text.match(/^hist-9$/gm) ?? []).length >= 2;
    });
    expect(twice).toBe(true);
    const bad = await send({ keys: ['Hyper-Q'] });
    expect(bad.error?.code).toBe('invalid_params');
  });

  test('a dangerous wait pattern is refused', async () => {
    const r = await wait('(a+)+$', { regex: true });
    expect(r.error?.code).toBe('invalid_params');
  });
});

describe('terminals where the machine does not allow them', () => {
  let gw: TestGateway;
  const agents: TestAgent[] = [];
  let client: Client;

  beforeAll(async () => {
    gw = await TestGateway.start();
    agents.push(
      await gw.addAgent('allowlisted', {
        ceiling: `${FULL_SHELL_CEILING}terminals = true\ncommands_mode = "allowlist"\n`,
      }),
    );
    agents.push(await gw.addAgent('noterm', { ceiling: `${FULL_SHELL_CEILING}terminals = false\n` }));
    client = await mcpClient(gw.url, await gw.apiToken());
    await waitFor('ceiling reports', async () => {
      const r = await callTool<{ machines: { ceiling: unknown }[] }>(client, 'machines_list', {});
      return r.data.machines.length === 2 && r.data.machines.every((m) => m.ceiling !== null);
    });
  });

  afterAll(async () => {
    await client?.close();
    for (const a of agents) await a.dispose();
    await gw?.dispose();
  });

  test('allowlist mode has no terminals (unsupported)', async () => {
    const r = await callTool(client, 'terminal_open', { machine: 'allowlisted' });
    expect(r.error?.code).toBe('unsupported');
  });

  test('terminals = false in the ceiling is blocked_by_ceiling', async () => {
    const r = await callTool(client, 'terminal_open', { machine: 'noterm' });
    expect(r.error?.code).toBe('blocked_by_ceiling');
  });
});
