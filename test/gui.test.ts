/**
 * Issue #15, the screen: gui_observe and gui_act on a real agent process driving a real Xvfb (its own display,
 * started and stopped here) with real X applications — a Tk form that writes what is typed into it to a file, and
 * xmessage, whose exit code proves a click on its button. The agent's own checks are driven by a COMPROMISED
 * gateway (test/support/rogue-gateway.ts), so what it refuses it refuses on its own authority; the tools' listing,
 * image content, masking, approval and audit go through a real gateway and the MCP SDK client.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  decodePng,
  nonBlackPixels,
  startXvfb,
  stopChild,
  type TestDisplay,
  writeTkForm,
  xmessageButtons,
  xvfbAvailable,
} from '../apps/agent/src/gui/xvfb.testing';
import { callTool, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { CliProcess, removeDir, runCliCommand, tempDir, waitFor } from './support/processes';
import { type RogueAnswer, RogueGateway } from './support/rogue-gateway';

const canRun = xvfbAvailable();
if (!canRun && process.env.CI) throw new Error('Xvfb is missing: .ci/run installs it for the screen tests');

const FAKE_GITHUB_TOKEN = `ghp_${'Z9y8X7w6V5'.repeat(3)}u4T3s2`;
const FORM = { x: 100, y: 100, width: 400, height: 150 };
const FORM_TITLE = `Secret form ${FAKE_GITHUB_TOKEN}`;
const MESSAGE_AT = { x: 600, y: 420 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const CEILING = (gui: string, extra = '') =>
  `version = 1\nshell = "full"\nrun_as = "${userInfo().username}"\nfiles = [{ path = "*", access = "rw" }]\ndeny = []\ngui = "${gui}"\n${extra}`;

interface Windowed {
  windows: {
    id: number;
    title: string;
    app: string;
    app_class: string;
    x: number;
    y: number;
    width: number;
    height: number;
  }[];
  hidden_windows: number;
  image: { x: number; y: number; width: number; height: number };
}

/** The applications on the test display: the Tk form (class Lkform) and an xmessage with two buttons. */
class Desktop {
  form!: ChildProcess;
  message!: ChildProcess;
  messageExit!: Promise<number | null>;
  messageOut = '';
  readonly dir = tempDir('gui-apps');
  readonly typed = join(this.dir, 'typed.txt');

  constructor(readonly xvfb: TestDisplay) {}

  async start(): Promise<void> {
    const env = { ...process.env, DISPLAY: this.xvfb.display };
    writeFileSync(this.typed, '');
    const geometry = `${FORM.width}x${FORM.height}+${FORM.x}+${FORM.y}`;
    this.form = spawn('python3', [writeTkForm(this.dir), this.typed, 'Lkform', FORM_TITLE, geometry], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => this.form.stdout?.once('data', () => resolve()));
    this.message = spawn(
      'xmessage',
      [
        '-print',
        '-geometry',
        `+${MESSAGE_AT.x}+${MESSAGE_AT.y}`,
        '-buttons',
        'Approve:7,Deny:3',
        'Deploy to production?',
      ],
      { env, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    this.message.stdout?.on('data', (d: Buffer) => {
      this.messageOut += d.toString();
    });
    this.messageExit = new Promise((r) => this.message.once('exit', (code) => r(code)));
    await waitFor('xmessage on the screen', () => {
      const tree = execFileSync('xwininfo', ['-display', this.xvfb.display, '-root', '-tree'], { encoding: 'utf8' });
      return tree.includes('"Xmessage"');
    });
  }

  /** The xmessage window's id and its Approve button's centre on the screen (read with xwininfo). */
  approveButton(windowId: number): { x: number; y: number } {
    const [approve] = xmessageButtons(this.xvfb.display, windowId);
    if (!approve) throw new Error('no xmessage button found');
    return { x: approve.x + Math.floor(approve.width / 2), y: approve.y + Math.floor(approve.height / 2) };
  }

  async stop(): Promise<void> {
    await stopChild(this.form);
    await stopChild(this.message);
    removeDir(this.dir);
  }
}

describe.skipIf(!canRun)('the screen tools on a real agent, driven by a compromised gateway', () => {
  let xvfb: TestDisplay;
  let desktop: Desktop;
  let rogue: RogueGateway;
  let agent: CliProcess;
  let stateDir: string;
  let ceilingPath: string;

  const rewriteCeiling = async (text: string) => {
    const before = rogue.reports.length;
    writeFileSync(`${ceilingPath}.new`, text, { mode: 0o644 });
    execFileSync('mv', [`${ceilingPath}.new`, ceilingPath]);
    await waitFor('the agent to report its new ceiling', () => rogue.reports.length > before);
  };
  /** What a compromised gateway claims: the policy it likes, and an approval nobody gave. */
  const context = (policy: Record<string, unknown>) => ({
    policy: { name: 'evil', gui: 'act', ...policy },
    approved: true,
    confirm: true,
    actor: 'mallory',
  });
  const observe = async (policy: Record<string, unknown> = {}, params: Record<string, unknown> = {}) => {
    const answer = await rogue.request('gui_observe', params, context(policy));
    return { answer, result: answer.result as Windowed, image: pngOf(answer) };
  };
  const act = (actions: unknown[], policy: Record<string, unknown> = {}) =>
    rogue.request('gui_act', { actions }, context(policy));
  const codeOf = (a: RogueAnswer) => (a.ok ? 'ok' : (a.error?.code ?? 'none'));
  const pngOf = (a: RogueAnswer) => {
    const b64 = a.chunks
      .filter((c) => c.stream === 'png')
      .map((c) => c.data)
      .join('');
    return b64 ? decodePng(Buffer.from(b64, 'base64')) : null;
  };
  const messageWindow = async () => {
    const { result } = await observe();
    const w = result.windows.find((c) => c.app_class === 'Xmessage');
    if (!w) throw new Error('xmessage is not listed');
    return w;
  };

  beforeAll(async () => {
    xvfb = await startXvfb(1024, 768);
    desktop = new Desktop(xvfb);
    await desktop.start();
    rogue = await RogueGateway.start();
    stateDir = tempDir('gui-rogue-state');
    ceilingPath = join(tempDir('gui-rogue-ceiling'), 'ceiling.toml');
    writeFileSync(join(stateDir, 'agent.json'), JSON.stringify(rogue.agentState('mch_gui_rogue')), { mode: 0o600 });
    writeFileSync(ceilingPath, CEILING('act'), { mode: 0o644 });
    agent = new CliProcess(['agent', 'run', '--state-dir', stateDir, '--ceiling', ceilingPath], {
      DISPLAY: xvfb.display,
    });
    await rogue.connected();
  });

  afterAll(async () => {
    await agent?.stop();
    await rogue?.close();
    await desktop?.stop();
    await xvfb?.stop();
    removeDir(stateDir);
    removeDir(join(ceilingPath, '..'));
  });

  test('gui_observe: a PNG of the whole screen, and both windows listed with app, title and geometry', async () => {
    const { answer, result, image } = await observe();
    expect(codeOf(answer)).toBe('ok');
    expect(image).toMatchObject({ width: 1024, height: 768 });
    const form = result.windows.find((w) => w.app_class === 'Lkform');
    expect(form).toMatchObject({ app: 'lkform', title: FORM_TITLE, ...FORM });
    expect(result.windows.find((w) => w.app_class === 'Xmessage')).toMatchObject({ app: 'xmessage', ...MESSAGE_AT });
    expect(result.hidden_windows).toBe(0);
    // The form's blue background is in the picture.
    expect(nonBlackPixels(image as NonNullable<typeof image>, FORM)).toBe(FORM.width * FORM.height);
  });

  test('an unlisted application is blacked out in the pixels and left out of the list', async () => {
    const xm = await messageWindow();
    const { result, image } = await observe({ gui_apps: ['Lkform'] });
    expect(result.windows.map((w) => w.app_class)).toEqual(['Lkform']);
    expect(result.hidden_windows).toBe(1);
    const img = image as NonNullable<typeof image>;
    expect(nonBlackPixels(img, xm)).toBe(0);
    expect(nonBlackPixels(img, FORM)).toBe(FORM.width * FORM.height);
    // Asking for that window by id is refused too, and no picture goes out.
    const one = await observe({ gui_apps: ['Lkform'] }, { window: xm.id });
    expect(codeOf(one.answer)).toBe('blocked_by_policy');
    expect(one.image).toBeNull();
  });

  test('clicks on an unlisted application are refused by the agent and do not happen', async () => {
    const xm = await messageWindow();
    const button = desktop.approveButton(xm.id);
    const onlyForm = { gui_apps: ['Lkform'] };
    const byPoint = await act([{ type: 'click', x: button.x, y: button.y }], onlyForm);
    expect(codeOf(byPoint)).toBe('blocked_by_policy');
    expect(byPoint.error?.details).toMatchObject({ action_index: 0, key: 'gui_apps' });
    const byWindow = await act([{ type: 'click', window: xm.id, x: 10, y: 10 }], onlyForm);
    expect(codeOf(byWindow)).toBe('blocked_by_policy');
    // The machine's own list: refused by the ceiling even when the policy lists xmessage.
    await rewriteCeiling(CEILING('act', 'gui_apps = ["Lkform"]\n'));
    const byCeiling = await act([{ type: 'click', x: button.x, y: button.y }], { gui_apps: ['Xmessage', 'Lkform'] });
    expect(codeOf(byCeiling)).toBe('blocked_by_ceiling');
    await rewriteCeiling(CEILING('act'));
    await sleep(500);
    expect(desktop.message.exitCode).toBeNull();
    expect(desktop.messageOut).toBe('');
  });

  test('click into the form and type: the application gets exactly the text', async () => {
    const r = await act(
      [
        { type: 'click', x: FORM.x + 200, y: FORM.y + 30 },
        { type: 'type', text: 'Hello from LetKite' },
        { type: 'key', keys: 'BackSpace !' },
      ],
      { gui_apps: ['Lkform'] },
    );
    expect(codeOf(r)).toBe('ok');
    expect(r.result).toMatchObject({ performed: 3 });
    await waitFor('the typed text in the file', () => readFileSync(desktop.typed, 'utf8') === 'Hello from LetKit!');
  });

  test('keyboard input while an unlisted application has the focus is refused and nothing is typed', async () => {
    const xm = await messageWindow();
    const before = readFileSync(desktop.typed, 'utf8');
    // Without a window manager the focus follows the pointer: move it over xmessage (allowed for any app).
    expect(codeOf(await act([{ type: 'move', x: xm.x + 5, y: xm.y + 5 }]))).toBe('ok');
    const typed = await act([{ type: 'type', text: 'leak' }], { gui_apps: ['Lkform'] });
    expect(codeOf(typed)).toBe('blocked_by_policy');
    const keys = await act([{ type: 'key', keys: 'Return' }], { gui_apps: ['Lkform'] });
    expect(codeOf(keys)).toBe('blocked_by_policy');
    // Moving there is refused as well when only the form is allowed.
    expect(codeOf(await act([{ type: 'move', x: xm.x + 5, y: xm.y + 5 }], { gui_apps: ['Lkform'] }))).toBe(
      'blocked_by_policy',
    );
    await sleep(500);
    expect(readFileSync(desktop.typed, 'utf8')).toBe(before);
    expect(desktop.message.exitCode).toBeNull();
  });

  test('ceiling gui = observe: gui_act is refused even with an approval claimed, gui_observe still works', async () => {
    await rewriteCeiling(CEILING('observe'));
    const before = readFileSync(desktop.typed, 'utf8');
    const r = await act([
      { type: 'click', x: FORM.x + 200, y: FORM.y + 30 },
      { type: 'type', text: 'should not arrive' },
    ]);
    expect(codeOf(r)).toBe('blocked_by_ceiling');
    expect(r.error?.details).toMatchObject({ layer: 'ceiling', key: 'gui' });
    expect(codeOf((await observe()).answer)).toBe('ok');
    await rewriteCeiling(CEILING('off'));
    expect(codeOf((await observe()).answer)).toBe('blocked_by_ceiling');
    await rewriteCeiling(CEILING('act'));
    await sleep(300);
    expect(readFileSync(desktop.typed, 'utf8')).toBe(before);
  });

  test('the policy gates: observe-only refuses act, and approval.tools needs a human approval', async () => {
    expect(codeOf(await act([{ type: 'wait', ms: 1 }], { gui: 'observe' }))).toBe('blocked_by_policy');
    const gated = await rogue.request(
      'gui_act',
      { actions: [{ type: 'wait', ms: 1 }] },
      { policy: { name: 'evil', gui: 'act', approval: { tools: ['gui_act'] } } },
    );
    expect(codeOf(gated)).toBe('blocked_by_policy');
    expect(gated.error?.details).toMatchObject({ key: 'approval.tools' });
  });

  test('with the application allowed, a click on its button happens: xmessage exits with its code', async () => {
    const xm = await messageWindow();
    const button = desktop.approveButton(xm.id);
    const r = await act([{ type: 'click', x: button.x, y: button.y }], { gui_apps: ['Xmessage'] });
    expect(codeOf(r)).toBe('ok');
    expect(await desktop.messageExit).toBe(7);
    expect(desktop.messageOut.trim()).toBe('Approve');
  });
});

describe.skipIf(!canRun)('the screen tools through a real gateway and MCP client', () => {
  let xvfb: TestDisplay;
  let desktop: Desktop;
  let gw: TestGateway;
  let agent: TestAgent;
  const clients: Client[] = [];

  const clientWith = async (policy: Record<string, unknown>) => {
    const token = await gw.apiTokenWithGrant({
      policy: { name: `p-${clients.length}`, ...policy },
      machines: '*',
      scopes: '*',
    } as never);
    const client = await mcpClient(gw.url, token);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    xvfb = await startXvfb(1024, 768);
    desktop = new Desktop(xvfb);
    await desktop.start();
    gw = await TestGateway.start();
    agent = await gw.addAgent('screen', { ceiling: CEILING('act'), env: { DISPLAY: xvfb.display } });
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await agent?.dispose();
    await gw?.dispose();
    await desktop?.stop();
    await xvfb?.stop();
  });

  test('a policy with the screen off does not list the screen tools; one with it on lists both', async () => {
    const off = await clientWith({ shell: 'full' });
    const offNames = (await off.listTools()).tools.map((t) => t.name);
    expect(offNames).toContain('exec');
    expect(offNames).not.toContain('gui_observe');
    expect(offNames).not.toContain('gui_act');
    const observeOnly = await clientWith({ gui: 'observe' });
    const observeNames = (await observeOnly.listTools()).tools.map((t) => t.name);
    expect(observeNames).toContain('gui_observe');
    expect(observeNames).not.toContain('gui_act');
    const on = await clientWith({ gui: 'act' });
    const onNames = (await on.listTools()).tools.map((t) => t.name);
    expect(onNames).toEqual(expect.arrayContaining(['gui_observe', 'gui_act']));
  });

  test('gui_observe answers with PNG image content and the window list, titles masked', async () => {
    const client = await clientWith({ gui: 'observe' });
    await waitFor('the machine online with its ceiling', async () => {
      const r = await callTool<{ machines: { ceiling: unknown; online: boolean }[] }>(client, 'machines_list', {});
      return r.data.machines.some((m) => m.online && m.ceiling !== null);
    });
    const r = await client.callTool({ name: 'gui_observe', arguments: { machine: 'screen' } });
    expect(r.isError).toBeFalsy();
    const content = r.content as { type: string; data?: string; mimeType?: string; text?: string }[];
    const picture = content.find((c) => c.type === 'image');
    expect(picture?.mimeType).toBe('image/png');
    expect(decodePng(Buffer.from(picture?.data ?? '', 'base64'))).toMatchObject({ width: 1024, height: 768 });
    const data = r.structuredContent as Windowed & { masked_count: number };
    const form = data.windows.find((w) => w.app_class === 'Lkform');
    expect(form?.title).toBe('Secret form ***');
    expect(data.masked_count).toBeGreaterThan(0);
    // The picture is not inside the JSON text copy.
    expect(content.find((c) => c.type === 'text')?.text?.length ?? 0).toBeLessThan(10_000);
    expect(JSON.stringify(r)).not.toContain(FAKE_GITHUB_TOKEN);
  });

  test('gui_act types into the form; the audit row keeps the actions with the typed secret masked', async () => {
    const client = await clientWith({ gui: 'act', gui_apps: ['Lkform'] });
    const r = await callTool(client, 'gui_act', {
      machine: 'screen',
      actions: [
        { type: 'click', x: FORM.x + 200, y: FORM.y + 30 },
        { type: 'type', text: `pw ${FAKE_GITHUB_TOKEN}` },
      ],
    });
    expect(r.ok).toBe(true);
    await waitFor('the typed text', () => readFileSync(desktop.typed, 'utf8') === `pw ${FAKE_GITHUB_TOKEN}`);
    const exported = await runCliCommand(
      ['admin', 'audit', 'export', '--format', 'jsonl', '--action', 'tool'],
      gw.cliEnv,
    );
    expect(exported.code).toBe(0);
    const rows = exported.stdout.split('\n').filter((l) => l.includes('gui_act'));
    expect(rows.length).toBeGreaterThan(0);
    expect(exported.stdout).not.toContain(FAKE_GITHUB_TOKEN);
    expect(rows.join('\n')).toContain('pw ***');
  });

  test('a click outside gui_apps is refused through MCP with the agent-side code', async () => {
    const client = await clientWith({ gui: 'act', gui_apps: ['Lkform'] });
    const r = await callTool(client, 'gui_act', { machine: 'screen', actions: [{ type: 'click', x: 2, y: 2 }] });
    expect(r.error?.code).toBe('blocked_by_policy');
  });

  test('gui_act listed under approval.tools waits for a human', async () => {
    const client = await clientWith({ gui: 'act', approval: { tools: ['gui_act'] } });
    const r = await callTool<{ status: string }>(client, 'gui_act', {
      machine: 'screen',
      actions: [{ type: 'wait', ms: 1 }],
    });
    expect(r.data.status).toBe('pending_approval');
  });
});

describe('the screen tools without a usable display', () => {
  let rogue: RogueGateway;
  let agent: CliProcess;
  const dirs: string[] = [];

  beforeAll(async () => {
    rogue = await RogueGateway.start();
    const stateDir = tempDir('gui-nodisplay-state');
    const ceilingDir = tempDir('gui-nodisplay-ceiling');
    dirs.push(stateDir, ceilingDir);
    writeFileSync(join(stateDir, 'agent.json'), JSON.stringify(rogue.agentState('mch_gui_none')), { mode: 0o600 });
    writeFileSync(join(ceilingDir, 'ceiling.toml'), CEILING('act'), { mode: 0o644 });
    agent = new CliProcess(
      ['agent', 'run', '--state-dir', stateDir, '--ceiling', join(ceilingDir, 'ceiling.toml')],
      // A Wayland session: refused, even though an X11 display (XWayland) is named.
      { DISPLAY: ':0', XDG_SESSION_TYPE: 'wayland' },
    );
    await rogue.connected();
  });

  afterAll(async () => {
    await agent?.stop();
    await rogue?.close();
    for (const d of dirs) removeDir(d);
  });

  test('a Wayland session is unsupported, named as such', async () => {
    const r = await rogue.request('gui_observe', {}, { policy: { name: 'p', gui: 'observe' } });
    expect(r.error?.code).toBe('unsupported');
    expect(r.error?.message).toMatch(/Wayland/);
  });

  test('the display is not a parameter: a request naming one is invalid_params', async () => {
    const r = await rogue.request('gui_observe', { display: ':99' }, { policy: { name: 'p', gui: 'observe' } });
    expect(r.error?.code).toBe('invalid_params');
  });
});
