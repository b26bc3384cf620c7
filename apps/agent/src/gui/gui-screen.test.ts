import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CEILING } from '@letkite/ceiling';
import { type AgentFrame, isLetKiteError } from '@letkite/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CeilingState } from '../ceiling/ceiling-source';
import { screenConfigFromEnv, x11Display } from './display';
import { GuiScreen } from './gui-screen';
import { parseKeys } from './keysyms';
import {
  decodePng,
  nonBlackPixels,
  startXvfb,
  stopChild,
  type TestDisplay,
  writeTkForm,
  xvfbAvailable,
} from './xvfb.testing';

const ceilingWith = (extra: Record<string, unknown>): CeilingState => ({
  source: 'file',
  path: '/test/ceiling.toml',
  ceiling: { ...DEFAULT_CEILING, gui: 'act', ...extra },
});
const policy = (extra: Record<string, unknown> = {}) => ({ name: 'screen', gui: 'act', ...extra });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return isLetKiteError(err) ? err.code : String(err);
  }
}

describe('which display the screen tools use', () => {
  const config = (env: Record<string, string>, platform: NodeJS.Platform = 'linux') =>
    screenConfigFromEnv(env, platform, 'host');

  test.each([
    ['macOS', config({ DISPLAY: ':0' }, 'darwin')],
    ['Windows', config({ DISPLAY: ':0' }, 'win32')],
    ['a Wayland session', config({ DISPLAY: ':0', XDG_SESSION_TYPE: 'wayland' })],
    ['Wayland without X11', config({ WAYLAND_DISPLAY: 'wayland-0' })],
    ['no display configured', config({})],
  ])('%s is unsupported', (_name, c) => {
    expect(() => x11Display(c)).toThrow(expect.objectContaining({ code: 'unsupported' }));
  });

  test('the agent environment names the display', () => {
    expect(x11Display(config({ DISPLAY: ':7' }))).toBe(':7');
  });
});

describe('key combinations', () => {
  test('modifiers and named keys parse; an unknown key is invalid_params', () => {
    expect(parseKeys('ctrl+shift+t Return')).toEqual([
      { modifiers: [0xffe3, 0xffe1], key: 0x74 },
      { modifiers: [], key: 0xff0d },
    ]);
    expect(parseKeys('ctrl++')).toEqual([{ modifiers: [0xffe3], key: 0x2b }]);
    expect(() => parseKeys('Hyper-Q')).toThrow(expect.objectContaining({ code: 'invalid_params' }));
  });
});

const canRun = xvfbAvailable();
if (!canRun && process.env.CI) throw new Error('Xvfb is missing: .ci/run installs it for the screen tests');

describe.skipIf(!canRun)('the screen under a real Xvfb', () => {
  let xvfb: TestDisplay;
  let dir: string;
  let form: ChildProcess;
  let screen: GuiScreen;
  const out = () => join(dir, 'typed.txt');

  beforeAll(async () => {
    xvfb = await startXvfb(640, 480);
    dir = mkdtempSync(join(tmpdir(), 'gui-unit-'));
    const env = { ...process.env, DISPLAY: xvfb.display };
    form = spawn('python3', [writeTkForm(dir), out(), 'Lkform', 'Secret form', '320x120+100+100'], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => form.stdout?.once('data', () => resolve()));
    screen = new GuiScreen(screenConfigFromEnv({ DISPLAY: xvfb.display }, 'linux', hostname()));
  });

  afterAll(async () => {
    await stopChild(form);
    await xvfb?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const observe = async (ceiling: CeilingState, extra: Record<string, unknown> = {}, params = {}) => {
    const frames: AgentFrame[] = [];
    const result = await screen.observe(params, { policy: policy(extra) }, ceiling, {
      id: 'r1',
      send: (f) => frames.push(f),
    });
    const png = frames.map((f) => (f.type === 'chunk' ? f.data : '')).join('');
    return { result, image: decodePng(Buffer.from(png, 'base64')) };
  };

  test('observe: a PNG of the screen and the form listed with its class and geometry', async () => {
    const { result, image } = await observe(ceilingWith({}));
    expect(image.width).toBe(640);
    expect(image.height).toBe(480);
    const w = result.windows.find((c) => c.app_class === 'Lkform');
    expect(w).toMatchObject({ title: 'Secret form', x: 100, y: 100, width: 320, height: 120 });
    expect(nonBlackPixels(image, { x: 100, y: 100, width: 320, height: 120 })).toBe(320 * 120);
  });

  test('observe one window: the image is that window only; an unknown id is not_found', async () => {
    const all = await observe(ceilingWith({}));
    const form = all.result.windows.find((c) => c.app_class === 'Lkform');
    const { result, image } = await observe(ceilingWith({}), {}, { window: form?.id });
    expect(result.image).toEqual({ x: 100, y: 100, width: 320, height: 120 });
    expect(image).toMatchObject({ width: 320, height: 120 });
    expect(await codeOf(observe(ceilingWith({}), {}, { window: 0x7ffffff }))).toBe('not_found');
  });

  test('act: scroll, a double click and a right click on the form are carried out', async () => {
    const r = await screen.act(
      {
        actions: [
          { type: 'scroll', x: 150, y: 200, dy: 3, dx: -1 },
          { type: 'click', x: 150, y: 200, double: true },
          {
            type: 'click',
            x: 10,
            y: 10,
            button: 'right',
            window: (await observe(ceilingWith({}))).result.windows[0]?.id,
          },
        ],
      },
      { policy: policy({ gui_apps: ['Lkform'] }) },
      ceilingWith({}),
      new AbortController().signal,
    );
    expect(r).toEqual({ performed: 3, pointer: { x: 110, y: 110 } });
  });

  test('observe: with gui_apps naming another app the form is blacked out and not listed', async () => {
    const { result, image } = await observe(ceilingWith({ gui_apps: ['xterm'] }));
    expect(result.windows).toEqual([]);
    expect(result.hidden_windows).toBeGreaterThan(0);
    expect(nonBlackPixels(image, { x: 0, y: 0, width: 640, height: 480 })).toBe(0);
  });

  test('act: click into the form and type; the application gets the text', async () => {
    const r = await screen.act(
      {
        actions: [
          { type: 'click', x: 260, y: 130 },
          { type: 'type', text: 'Hello, X11! ä' },
          { type: 'wait', ms: 200 },
        ],
      },
      { policy: policy({ gui_apps: ['Lkform'] }) },
      ceilingWith({}),
      new AbortController().signal,
    );
    expect(r.performed).toBe(3);
    await expect.poll(() => readFileSync(out(), 'utf8'), { timeout: 5000 }).toBe('Hello, X11! ä');
  });

  test('act: a drag across the field selects its text, and typing replaces it', async () => {
    const r = await screen.act(
      {
        actions: [
          { type: 'drag', x: 390, y: 131, to_x: 123, to_y: 131 },
          { type: 'type', text: 'Z' },
        ],
      },
      { policy: policy({ gui_apps: ['Lkform'] }) },
      ceilingWith({}),
      new AbortController().signal,
    );
    expect(r.performed).toBe(2);
    await expect.poll(() => readFileSync(out(), 'utf8'), { timeout: 5000 }).toBe('Z');
    // A drag that ends outside the allowed windows is refused before the button goes down.
    const code = await codeOf(
      screen.act(
        { actions: [{ type: 'drag', x: 390, y: 131, to_x: 5, to_y: 5 }] },
        { policy: policy({ gui_apps: ['Lkform'] }) },
        ceilingWith({}),
        new AbortController().signal,
      ),
    );
    expect(code).toBe('blocked_by_policy');
  });

  test('act: the desktop is outside gui_apps: moving there and typing there are refused, and nothing is typed', async () => {
    const signal = new AbortController().signal;
    const onlyForm = { policy: policy({ gui_apps: ['Lkform'] }) };
    const before = readFileSync(out(), 'utf8');
    expect(
      await codeOf(screen.act({ actions: [{ type: 'move', x: 5, y: 5 }] }, onlyForm, ceilingWith({}), signal)),
    ).toBe('blocked_by_policy');
    // Any application: the pointer may go to the desktop, where keys reach no window of the form.
    await screen.act({ actions: [{ type: 'move', x: 5, y: 5 }] }, { policy: policy() }, ceilingWith({}), signal);
    expect(
      await codeOf(screen.act({ actions: [{ type: 'type', text: 'nope' }] }, onlyForm, ceilingWith({}), signal)),
    ).toBe('blocked_by_policy');
    expect(
      await codeOf(
        screen.act(
          { actions: [{ type: 'key', keys: 'Return' }] },
          { policy: policy() },
          ceilingWith({ gui_apps: ['Lkform'] }),
          signal,
        ),
      ),
    ).toBe('blocked_by_ceiling');
    await sleep(300);
    expect(readFileSync(out(), 'utf8')).toBe(before);
  });

  test('the ceiling decides: gui = observe refuses act, gui = off refuses observe', async () => {
    const signal = new AbortController().signal;
    expect(
      await codeOf(
        screen.act(
          { actions: [{ type: 'wait', ms: 1 }] },
          { policy: policy() },
          ceilingWith({ gui: 'observe' }),
          signal,
        ),
      ),
    ).toBe('blocked_by_ceiling');
    expect(await codeOf(observe(ceilingWith({ gui: 'off' })))).toBe('blocked_by_ceiling');
    expect(await codeOf(observe(ceilingWith({}), { gui: 'off' }))).toBe('blocked_by_policy');
  });
});
