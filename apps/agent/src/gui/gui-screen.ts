import {
  type AgentFrame,
  type GuiAction,
  type GuiActResult,
  type GuiObserveResult,
  LetKiteError,
  type RequestContext,
} from '@letkite/protocol';
import { GuiActParams, GuiObserveParams } from '@letkite/protocol/ops-gui';
import type { CeilingState } from '../ceiling/ceiling-source';
import { requestPolicy } from '../guard/request-policy';
import { sendChunks } from '../ops/send-chunks';
import { type ScreenConfig, x11Display } from './display';
import { keysymOfChar, parseKeys } from './keysyms';
import { encodePng } from './png';
import { appAllowed, outsideApps, type ScreenAccess, screenAccess } from './screen-access';
import { blackOut, readScreenState, type ScreenState, type TopWindow, windowAt } from './screen-state';
import { XInput } from './x-input';
import { X11Client } from './x11-client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pause after each input action, so the application sees it before the next action is checked. */
const SETTLE_MS = 30;

/**
 * The screen tools on the agent (issue #15). Every call re-checks the ceiling and the policy, connects to the
 * configured display afresh, and is serialised with the others (two callers' input must not interleave). Blacking
 * out and every refusal happen here, whatever the gateway asked or claims.
 */
export class GuiScreen {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly config: ScreenConfig) {}

  async observe(
    raw: unknown,
    context: RequestContext,
    ceiling: CeilingState,
    out: { id: string; send: (f: AgentFrame) => void },
  ): Promise<GuiObserveResult> {
    const params = GuiObserveParams.parse(raw);
    const access = screenAccess(requestPolicy(context.policy, ceiling), 'observe', context);
    return this.serialised(() => this.withDisplay((x) => capture(x, access, params.window, out)));
  }

  async act(raw: unknown, context: RequestContext, ceiling: CeilingState, signal: AbortSignal): Promise<GuiActResult> {
    const params = GuiActParams.parse(raw);
    const access = screenAccess(requestPolicy(context.policy, ceiling), 'act', context);
    return this.serialised(() => this.withDisplay((x) => perform(x, access, params.actions, signal)));
  }

  private serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async withDisplay<T>(use: (x: X11Client) => Promise<T>): Promise<T> {
    const display = x11Display(this.config);
    const x = await X11Client.connect(display, {
      ...(this.config.xauthority ? { xauthority: this.config.xauthority } : {}),
      hostname: this.config.hostname,
    });
    try {
      return await use(x);
    } finally {
      x.close();
    }
  }
}

function rgbOf(x: X11Client, pixels: Buffer, width: number, height: number): Buffer {
  const { bitsPerPixel, redMask, greenMask, blueMask } = x.screen;
  if (bitsPerPixel !== 32 || redMask !== 0xff0000 || greenMask !== 0xff00 || blueMask !== 0xff) {
    throw new LetKiteError(
      'unsupported',
      `the screen's pixel format (${x.screen.depth}-bit, ${bitsPerPixel} bits per pixel) is not supported (24-bit true colour only)`,
      { layer: 'agent' },
    );
  }
  const rgb = Buffer.alloc(width * height * 3);
  for (let i = 0, o = 0; o < rgb.length; i += 4, o += 3) {
    rgb[o] = pixels[i + 2] as number;
    rgb[o + 1] = pixels[i + 1] as number;
    rgb[o + 2] = pixels[i] as number;
  }
  return rgb;
}

async function capture(
  x: X11Client,
  access: ScreenAccess,
  windowId: number | undefined,
  out: { id: string; send: (f: AgentFrame) => void },
): Promise<GuiObserveResult> {
  // Under a grab, so the windows cannot move between reading where they are and reading the pixels.
  x.grabServer();
  let state: ScreenState;
  let rect: { x: number; y: number; width: number; height: number };
  let pixels: Buffer;
  try {
    state = await readScreenState(x);
    rect = { x: 0, y: 0, width: state.width, height: state.height };
    if (windowId !== undefined) {
      const w = state.windows.find((c) => c.id === windowId);
      if (!w) throw new LetKiteError('not_found', `no window ${windowId} is shown on the screen`);
      if (!appAllowed(access, w)) throw outsideApps(access, `window ${windowId}`, w);
      const x0 = Math.max(0, w.x);
      const y0 = Math.max(0, w.y);
      const x1 = Math.min(state.width, w.x + w.width);
      const y1 = Math.min(state.height, w.y + w.height);
      if (x1 <= x0 || y1 <= y0) throw new LetKiteError('not_found', `window ${windowId} is outside the screen`);
      rect = { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
    }
    pixels = await x.image(rect.x, rect.y, rect.width, rect.height);
  } finally {
    x.ungrabServer();
  }
  const rgb = rgbOf(x, pixels, rect.width, rect.height);
  const allowed = (w: TopWindow) => appAllowed(access, w);
  // Nothing leaves the agent unmasked: the hidden windows' pixels are gone before the PNG is made.
  if (!access.any) blackOut(rgb, rect, state.windows, allowed, false);
  const png = encodePng(rect.width, rect.height, rgb);
  sendChunks(out.send, out.id, 'png', png.toString('base64'));
  const shown = state.windows.filter(allowed);
  return {
    screen: { width: state.width, height: state.height },
    image: rect,
    windows: shown.map((w) => ({
      id: w.id,
      title: w.title,
      app: w.app,
      app_class: w.appClass,
      x: w.x,
      y: w.y,
      width: w.width,
      height: w.height,
      focused: state.keyboardTarget === w.id,
    })),
    hidden_windows: state.windows.length - shown.length,
  };
}

/** The screen point of a pointer action, checked against the windows as they are now. */
function pointTarget(
  state: ScreenState,
  access: ScreenAccess,
  action: { x: number; y: number; window?: number | undefined },
): { x: number; y: number } {
  let { x, y } = action;
  if (action.window !== undefined) {
    const w = state.windows.find((c) => c.id === action.window);
    if (!w) throw new LetKiteError('not_found', `no window ${action.window} is shown on the screen`);
    if (!appAllowed(access, w)) throw outsideApps(access, `window ${action.window}`, w);
    x += w.x;
    y += w.y;
  }
  if (x < 0 || y < 0 || x >= state.width || y >= state.height) {
    throw new LetKiteError(
      'invalid_params',
      `the point (${x}, ${y}) is outside the ${state.width}×${state.height} screen`,
    );
  }
  if (!access.any) {
    const under = windowAt(state, x, y);
    if (!under || !appAllowed(access, under)) throw outsideApps(access, `the point (${x}, ${y})`, under);
  }
  return { x, y };
}

/** Keyboard input goes where the focus is: refused unless that is a window of an allowed application. */
function checkKeyboardTarget(state: ScreenState, access: ScreenAccess): void {
  if (access.any) return;
  const target = state.windows.find((w) => w.id === state.keyboardTarget) ?? null;
  if (!target || !appAllowed(access, target)) throw outsideApps(access, 'the window with the keyboard focus', target);
}

async function perform(
  x: X11Client,
  access: ScreenAccess,
  actions: readonly GuiAction[],
  signal: AbortSignal,
): Promise<GuiActResult> {
  if (!(await x.hasXTest())) {
    throw new LetKiteError('unsupported', 'the X11 display has no XTest extension, so it cannot be driven', {
      layer: 'agent',
    });
  }
  // A key name or character that cannot be typed is refused before anything happens.
  for (const action of actions) {
    if (action.type === 'key') parseKeys(action.keys);
    if (action.type === 'type') for (const ch of action.text) keysymOfChar(ch);
  }
  const input = await XInput.load(x);
  let performed = 0;
  try {
    for (const action of actions) {
      if (signal.aborted) throw new LetKiteError('timeout', 'the call was cancelled', { performed });
      if (action.type === 'wait') {
        await sleep(action.ms);
        performed++;
        continue;
      }
      // Checked and injected under one server grab: no window can move in between.
      x.grabServer();
      try {
        const state = await readScreenState(x);
        try {
          inject(input, state, access, action);
        } catch (err) {
          if (err instanceof LetKiteError) {
            throw new LetKiteError(err.code, `action ${performed} (${action.type}): ${err.message}`, {
              ...err.details,
              action_index: performed,
            });
          }
          throw err;
        }
      } finally {
        x.ungrabServer();
      }
      await x.sync();
      performed++;
      await sleep(SETTLE_MS);
    }
  } finally {
    await input.restore();
  }
  const pointer = await x.queryPointer();
  return { performed, pointer: { x: pointer.x, y: pointer.y } };
}

function inject(input: XInput, state: ScreenState, access: ScreenAccess, action: Exclude<GuiAction, { type: 'wait' }>) {
  switch (action.type) {
    case 'move': {
      const p = pointTarget(state, access, action);
      input.move(p.x, p.y);
      return;
    }
    case 'click': {
      const p = pointTarget(state, access, action);
      input.move(p.x, p.y);
      const button = action.button === 'middle' ? 2 : action.button === 'right' ? 3 : 1;
      input.click(button, action.double ? 2 : 1);
      return;
    }
    case 'scroll': {
      const p = pointTarget(state, access, action);
      input.move(p.x, p.y);
      if (action.dy !== 0) input.click(action.dy > 0 ? 5 : 4, Math.abs(action.dy));
      if (action.dx !== 0) input.click(action.dx > 0 ? 7 : 6, Math.abs(action.dx));
      return;
    }
    case 'drag': {
      const from = pointTarget(state, access, action);
      const to = pointTarget(state, access, { x: action.to_x, y: action.to_y, window: action.window });
      const button = action.button === 'middle' ? 2 : action.button === 'right' ? 3 : 1;
      input.drag(button, from, to);
      return;
    }
    case 'type':
      checkKeyboardTarget(state, access);
      input.type(action.text);
      return;
    case 'key':
      checkKeyboardTarget(state, access);
      input.keys(action.keys);
      return;
  }
}
