import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { waitFor } from './support/processes';

/** A token format the default redaction patterns mask (never a real one). */
const FAKE_GITHUB_TOKEN = `ghp_${'Z9x8C7v6B5'.repeat(3)}n4M3q2`;

async function readText(client: Client, uri: string): Promise<string> {
  const r = await client.readResource({ uri });
  const first = r.contents[0] as { uri: string; text?: string };
  expect(first.uri).toBe(uri);
  return first.text ?? '';
}

async function readError(client: Client, uri: string): Promise<McpError> {
  try {
    await client.readResource({ uri });
  } catch (err) {
    expect(err).toBeInstanceOf(McpError);
    return err as McpError;
  }
  throw new Error(`reading ${uri} succeeded`);
}

describe('MCP resources, completion and logging through a real gateway and agent', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let other: TestAgent;
  let client: Client;
  let machineId: string;
  let terminal: string;

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('res-box', { ceiling: `${FULL_SHELL_CEILING}terminals = true\n` });
    other = await gw.addAgent('res-other');
    client = await mcpClient(gw.url, await gw.apiToken('resources'));
    await machineOnline(client, 'res-box');
    const list = await callTool<{ machines: { id: string; name: string }[] }>(client, 'machines_list', {});
    machineId = list.data.machines.find((m) => m.name === 'res-box')?.id as string;
    const opened = await callTool<{ terminal_id: string }>(client, 'terminal_open', {
      machine: 'res-box',
      cols: 100,
      rows: 30,
    });
    expect(opened.ok, JSON.stringify(opened.error)).toBe(true);
    terminal = opened.data.terminal_id;
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await other?.dispose();
    await gw?.dispose();
  });

  test('the server declares resources, logging and completions; lists the fixed resources and the templates', async () => {
    expect(client.getServerCapabilities()).toMatchObject({ resources: {}, logging: {}, completions: {} });
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toEqual(
      expect.arrayContaining(['letkite://machines', 'letkite://shell-sessions', `letkite://machines/${machineId}`]),
    );
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual([
      'letkite://jobs/{id}/output',
      'letkite://machines/{id}',
      'letkite://terminals/{id}/screen',
      'letkite://terminals/{id}/scrollback',
    ]);
  });

  test('machines and one machine (by id or name) read as JSON', async () => {
    const all = JSON.parse(await readText(client, 'letkite://machines')) as { machines: { name: string }[] };
    expect(all.machines.map((m) => m.name).sort()).toEqual(['res-box', 'res-other']);
    const one = JSON.parse(await readText(client, `letkite://machines/${machineId}`));
    expect(one).toMatchObject({ id: machineId, name: 'res-box', online: true });
    expect(JSON.parse(await readText(client, 'letkite://machines/res-box')).id).toBe(machineId);
    expect((await readError(client, 'letkite://machines/nowhere')).code).toBe(-32002);
    expect((await readError(client, 'letkite://nothing-here')).code).toBe(-32002);
  });

  test('a terminal screen and its scrollback are masked like terminal_read', async () => {
    await callTool(client, 'terminal_send', {
      machine: 'res-box',
      terminal_id: terminal,
      text: `echo SCREEN-$((20+1)) ${FAKE_GITHUB_TOKEN}`,
      submit: true,
    });
    const screen = await waitFor('the echo on the screen', async () => {
      const text = await readText(client, `letkite://terminals/${terminal}/screen`);
      return text.includes('SCREEN-21') ? text : null;
    });
    expect(screen).not.toContain(FAKE_GITHUB_TOKEN);
    expect(screen).toContain('***');
    const scrollback = await readText(client, `letkite://terminals/${terminal}/scrollback`);
    expect(scrollback).toContain('SCREEN-21');
    expect(scrollback).not.toContain(FAKE_GITHUB_TOKEN);
  });

  test('a job output resource shows the newest output, masked', async () => {
    const job = await callTool<{ job_id: string }>(client, 'job_start', {
      machine: 'res-box',
      command: `echo job-line-one; echo ${FAKE_GITHUB_TOKEN}; echo job-done`,
    });
    expect(job.ok, JSON.stringify(job.error)).toBe(true);
    const uri = `letkite://jobs/${job.data.job_id}/output`;
    const text = await waitFor('the job output', async () => {
      const t = await readText(client, uri);
      return t.includes('job-done') ? t : null;
    });
    expect(text).toContain('job-line-one');
    expect(text).not.toContain(FAKE_GITHUB_TOKEN);
  });

  test('shell sessions started by this connection are listed', async () => {
    const run = await callTool<{ session_id: string }>(client, 'shell_run', { machine: 'res-box', command: 'cd /tmp' });
    expect(run.ok, JSON.stringify(run.error)).toBe(true);
    const list = JSON.parse(await readText(client, 'letkite://shell-sessions')) as {
      sessions: { session_id: string; machine: string }[];
    };
    expect(list.sessions).toContainEqual(
      expect.objectContaining({ session_id: run.data.session_id, machine: 'res-box', machine_id: machineId }),
    );
  });

  test("another connection cannot read this connection's terminal (not found), nor see its sessions", async () => {
    const stranger = await mcpClient(gw.url, await gw.apiToken('stranger'));
    try {
      expect((await readError(stranger, `letkite://terminals/${terminal}/screen`)).code).toBe(-32002);
      const list = JSON.parse(await readText(stranger, 'letkite://shell-sessions'));
      expect(list.sessions).toEqual([]);
    } finally {
      await stranger.close();
    }
  });

  test('a token without the commands scope sees no shell sessions, and one limited to another machine sees none', async () => {
    const filesOnly = await mcpClient(gw.url, await gw.apiToken('files-only', ['--scopes', 'files']));
    const elsewhere = await mcpClient(gw.url, await gw.apiToken('elsewhere', ['--machines', 'res-other']));
    try {
      const { resources } = await filesOnly.listResources();
      expect(resources.map((r) => r.uri)).not.toContain('letkite://shell-sessions');
      expect((await readError(filesOnly, 'letkite://shell-sessions')).code).toBe(-32600);
      // machines_list is a base tool: the machine resource stays readable.
      expect(
        JSON.parse(await readText(elsewhere, 'letkite://machines')).machines.map((m: { name: string }) => m.name),
      ).toEqual(['res-other']);
      expect((await readError(elsewhere, `letkite://machines/${machineId}`)).code).toBe(-32002);
      const done = await elsewhere.complete({
        ref: { type: 'ref/resource', uri: 'letkite://machines/{id}' },
        argument: { name: 'id', value: 'res' },
      });
      expect(done.completion.values).toEqual(['res-other']);
    } finally {
      await filesOnly.close();
      await elsewhere.close();
    }
  });

  test('completion offers the machine names the grant reaches, and this connection’s terminal ids', async () => {
    const byName = await client.complete({
      ref: { type: 'ref/resource', uri: 'letkite://machines/{id}' },
      argument: { name: 'id', value: 'res-b' },
    });
    expect(byName.completion.values).toEqual(['res-box']);
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'anything' },
      argument: { name: 'via_machine', value: '' },
    });
    expect(prompt.completion.values).toEqual(expect.arrayContaining(['res-box', 'res-other']));
    const term = await client.complete({
      ref: { type: 'ref/resource', uri: 'letkite://terminals/{id}/screen' },
      argument: { name: 'id', value: terminal.slice(0, 8) },
    });
    expect(term.completion.values).toContain(terminal);
  });

  test('logging/setLevel makes the gateway log the session’s own calls, without their arguments', async () => {
    const messages: { level: string; data: Record<string, unknown> }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      messages.push(n.params as { level: string; data: Record<string, unknown> });
    });
    // Before any setLevel the gateway sends none.
    await callTool(client, 'exec', { machine: 'res-box', command: 'true' });
    expect(messages).toEqual([]);
    await client.setLoggingLevel('info');
    await callTool(client, 'exec', { machine: 'res-box', command: `echo ${FAKE_GITHUB_TOKEN}` });
    await callTool(client, 'exec', { machine: 'nowhere', command: 'true' });
    expect(messages).toContainEqual(
      expect.objectContaining({ level: 'info', data: expect.objectContaining({ tool: 'exec', outcome: 'ok' }) }),
    );
    expect(messages).toContainEqual(
      expect.objectContaining({ level: 'warning', data: expect.objectContaining({ outcome: 'machine_not_found' }) }),
    );
    expect(JSON.stringify(messages)).not.toContain(FAKE_GITHUB_TOKEN);
    expect(messages.some((m) => m.level === 'debug')).toBe(false);
  });

  test('resources/subscribe: a terminal screen that changes and a machine that goes away are announced', async () => {
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    const screen = `letkite://terminals/${terminal}/screen`;
    await client.subscribeResource({ uri: screen });
    await client.subscribeResource({ uri: 'letkite://machines' });
    // Subscribing to what cannot be read is refused like reading it.
    expect(
      await client.subscribeResource({ uri: 'letkite://terminals/term_doesnotexist00/screen' }).then(
        () => null,
        (e: McpError) => e.code,
      ),
    ).toBe(-32002);
    // The watcher's first look is its baseline: give it one before changing anything.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(updated).toEqual([]);
    await callTool(client, 'terminal_send', {
      machine: 'res-box',
      terminal_id: terminal,
      text: 'echo SUBSCRIBED-$((40+2))',
      submit: true,
    });
    await waitFor('the screen update', async () => updated.includes(screen));
    await other.stop();
    await waitFor('the machines update', async () => updated.includes('letkite://machines'));
    await client.unsubscribeResource({ uri: screen });
    const seen = updated.filter((u) => u === screen).length;
    await callTool(client, 'terminal_send', {
      machine: 'res-box',
      terminal_id: terminal,
      text: 'echo AFTER',
      submit: true,
    });
    await new Promise((r) => setTimeout(r, 5_000));
    expect(updated.filter((u) => u === screen).length).toBe(seen);
  });
});
