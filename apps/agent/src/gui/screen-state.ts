import { ATOM, FOCUS_NONE, FOCUS_POINTER_ROOT, type X11Client } from './x11-client';

/** One top-level window (a child of the root: the window itself, or its frame under a window manager). */
export interface TopWindow {
  id: number;
  title: string;
  app: string;
  appClass: string;
  /** Outer rectangle on the screen, border included. */
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The viewable top-level windows, bottom to top (X's stacking order), and where keyboard input goes. */
export interface ScreenState {
  width: number;
  height: number;
  windows: TopWindow[];
  /** The top-level window keyboard input would reach now; null: none (the root, or focus None). */
  keyboardTarget: number | null;
  pointer: { x: number; y: number };
}

const MAX_TITLE = 512;
/** How deep under a frame the client window with WM_CLASS is looked for. */
const CLIENT_SEARCH_DEPTH = 3;

function nulTerminated(bytes: Buffer, from = 0): [string, number] {
  const end = bytes.indexOf(0, from);
  const stop = end === -1 ? bytes.length : end;
  return [bytes.subarray(from, stop).toString('latin1'), stop + 1];
}

/** The window (or the first descendant, breadth-first) that carries WM_CLASS: the application's client window. */
async function clientWindow(x: X11Client, top: number): Promise<{ window: number; wmClass: Buffer } | null> {
  let level = [top];
  for (let depth = 0; depth <= CLIENT_SEARCH_DEPTH && level.length > 0; depth++) {
    const next: number[] = [];
    for (const w of level) {
      const wmClass = await x.property(w, ATOM.WM_CLASS, 1024);
      if (wmClass) return { window: w, wmClass };
      if (depth < CLIENT_SEARCH_DEPTH) next.push(...(await x.queryTree(w)).children);
    }
    level = next.slice(0, 64);
  }
  return null;
}

async function titleOf(x: X11Client, window: number): Promise<string> {
  const netName = await x.property(window, await x.internAtom('_NET_WM_NAME'), MAX_TITLE * 4);
  if (netName && netName.length > 0) return netName.toString('utf8').slice(0, MAX_TITLE);
  const name = await x.property(window, ATOM.WM_NAME, MAX_TITLE);
  return name ? name.toString('latin1').slice(0, MAX_TITLE) : '';
}

/** The top-level window holding `window` (walking up to the root's child); null for the root itself. */
async function topLevelOf(x: X11Client, window: number): Promise<number | null> {
  const root = x.screen.root;
  let current = window;
  for (let i = 0; i < 64; i++) {
    if (current === root) return null;
    const { parent } = await x.queryTree(current);
    if (parent === root || parent === 0) return current;
    current = parent;
  }
  return null;
}

/** Reads the screen's windows, focus and pointer. Call it under a server grab when acting on the answer. */
export async function readScreenState(x: X11Client): Promise<ScreenState> {
  const { children } = await x.queryTree(x.screen.root);
  const windows: TopWindow[] = [];
  for (const id of children) {
    const attributes = await x.windowAttributes(id).catch(() => null);
    if (attributes?.mapState !== 2) continue;
    const g = await x.geometry(id).catch(() => null);
    if (!g) continue;
    // A window that went away meanwhile (its client disconnected) is simply not listed.
    const client = await clientWindow(x, id).catch(() => null);
    const [app, next] = client ? nulTerminated(client.wmClass) : ['', 0];
    const [appClass] = client ? nulTerminated(client.wmClass, next) : [''];
    windows.push({
      id,
      title: client ? await titleOf(x, client.window).catch(() => '') : '',
      app,
      appClass,
      x: g.x,
      y: g.y,
      width: g.width + 2 * g.border,
      height: g.height + 2 * g.border,
    });
  }
  const pointer = await x.queryPointer();
  const focus = await x.inputFocus();
  let keyboardTarget: number | null;
  if (focus === FOCUS_NONE) keyboardTarget = null;
  else if (focus === FOCUS_POINTER_ROOT || focus === x.screen.root) {
    // Keys go to the window under the pointer.
    keyboardTarget = pointer.child === 0 ? null : pointer.child;
  } else keyboardTarget = await topLevelOf(x, focus);
  return {
    width: x.screen.width,
    height: x.screen.height,
    windows,
    keyboardTarget,
    pointer: { x: pointer.x, y: pointer.y },
  };
}

/** The topmost viewable window at a screen point, or null (the desktop, or off the screen). */
export function windowAt(state: ScreenState, px: number, py: number): TopWindow | null {
  for (let i = state.windows.length - 1; i >= 0; i--) {
    const w = state.windows[i] as TopWindow;
    if (px >= w.x && px < w.x + w.width && py >= w.y && py < w.y + w.height) return w;
  }
  return null;
}

/**
 * Blacks out, in an RGB image of the screen rectangle (ox, oy, width, height), every pixel whose topmost window is
 * not allowed, and the desktop itself when `desktopAllowed` is false. Windows are painted bottom to top, so an
 * allowed window shows only where nothing unlisted covers it.
 */
export function blackOut(
  rgb: Buffer,
  rect: { x: number; y: number; width: number; height: number },
  windows: readonly TopWindow[],
  allowed: (w: TopWindow) => boolean,
  desktopAllowed: boolean,
): void {
  const visible = new Uint8Array(rect.width * rect.height).fill(desktopAllowed ? 1 : 0);
  for (const w of windows) {
    const value = allowed(w) ? 1 : 0;
    const x0 = Math.max(w.x, rect.x) - rect.x;
    const y0 = Math.max(w.y, rect.y) - rect.y;
    const x1 = Math.min(w.x + w.width, rect.x + rect.width) - rect.x;
    const y1 = Math.min(w.y + w.height, rect.y + rect.height) - rect.y;
    for (let y = y0; y < y1; y++) visible.fill(value, y * rect.width + x0, y * rect.width + Math.max(x0, x1));
  }
  for (let i = 0; i < visible.length; i++) {
    if (visible[i] === 0) rgb.fill(0, i * 3, i * 3 + 3);
  }
}
