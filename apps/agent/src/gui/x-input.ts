import { LetKiteError } from '@letkite/protocol';
import { keysymOfChar, parseKeys } from './keysyms';
import { type X11Client, XEVENT } from './x11-client';

const SHIFT_L = 0xffe1;
/** After typing through a borrowed keycode, how long the mapping stays so the application can translate the key. */
const BORROW_HOLD_MS = 200;

/**
 * Keyboard and pointer input through XTest, in keysyms: each keysym is found on the keyboard's mapping (with Shift
 * when it sits in the second column); a character the keyboard has no key for borrows an unused keycode for the
 * call, and the mapping is put back afterwards (`restore`).
 */
export class XInput {
  private readonly borrowed = new Map<number, number>();
  private free: number[];

  private constructor(
    private readonly x: X11Client,
    private readonly mapping: number[][],
  ) {
    this.free = mapping.flatMap((row, i) => (row.every((s) => s === 0) ? [x.minKeycode + i] : [])).reverse();
  }

  static async load(x: X11Client): Promise<XInput> {
    return new XInput(x, (await x.keyboardMapping()).keysyms);
  }

  /** The keycode for a keysym and whether Shift is needed. */
  private keycodeOf(keysym: number): { keycode: number; shift: boolean } {
    for (let column = 0; column < 2; column++) {
      const row = this.mapping.findIndex((r) => r[column] === keysym);
      if (row !== -1) return { keycode: this.x.minKeycode + row, shift: column === 1 };
    }
    const known = this.borrowed.get(keysym);
    if (known !== undefined) return { keycode: known, shift: false };
    const keycode = this.free.pop();
    if (keycode === undefined) {
      throw new LetKiteError(
        'unsupported',
        `the keyboard has no key for keysym 0x${keysym.toString(16)} and no free key`,
      );
    }
    this.x.changeKeyboardMapping(keycode, [keysym, keysym]);
    this.borrowed.set(keysym, keycode);
    return { keycode, shift: false };
  }

  private press(keysym: number): { keycode: number; shift: boolean } {
    const k = this.keycodeOf(keysym);
    const shift = k.shift ? this.keycodeOf(SHIFT_L).keycode : null;
    if (shift !== null) this.x.fakeInput(XEVENT.KeyPress, shift);
    this.x.fakeInput(XEVENT.KeyPress, k.keycode);
    return { keycode: k.keycode, shift: shift !== null };
  }

  private tap(keysym: number): void {
    const { keycode, shift } = this.press(keysym);
    this.x.fakeInput(XEVENT.KeyRelease, keycode);
    if (shift) this.x.fakeInput(XEVENT.KeyRelease, this.keycodeOf(SHIFT_L).keycode);
  }

  move(px: number, py: number): void {
    this.x.fakeInput(XEVENT.MotionNotify, 0, px, py);
  }

  click(button: number, times: number): void {
    for (let i = 0; i < times; i++) {
      this.x.fakeInput(XEVENT.ButtonPress, button);
      this.x.fakeInput(XEVENT.ButtonRelease, button);
    }
  }

  /** Button down at `from`, motion in a few steps (so the application sees a drag), button up at `to`. */
  drag(button: number, from: { x: number; y: number }, to: { x: number; y: number }): void {
    this.move(from.x, from.y);
    this.x.fakeInput(XEVENT.ButtonPress, button);
    const steps = 8;
    for (let i = 1; i <= steps; i++) {
      this.move(Math.round(from.x + ((to.x - from.x) * i) / steps), Math.round(from.y + ((to.y - from.y) * i) / steps));
    }
    this.x.fakeInput(XEVENT.ButtonRelease, button);
  }

  type(text: string): void {
    for (const ch of text) this.tap(keysymOfChar(ch));
  }

  /** Presses each combination: modifiers down in order, the key, then everything up in reverse. */
  keys(spec: string): void {
    for (const combo of parseKeys(spec)) {
      const held = combo.modifiers.map((m) => this.keycodeOf(m).keycode);
      for (const k of held) this.x.fakeInput(XEVENT.KeyPress, k);
      const { keycode, shift } = this.press(combo.key);
      this.x.fakeInput(XEVENT.KeyRelease, keycode);
      if (shift) this.x.fakeInput(XEVENT.KeyRelease, this.keycodeOf(SHIFT_L).keycode);
      for (const k of held.reverse()) this.x.fakeInput(XEVENT.KeyRelease, k);
    }
  }

  /** Gives back the keycodes borrowed for characters the keyboard lacks. */
  async restore(): Promise<void> {
    if (this.borrowed.size === 0) return;
    await new Promise((r) => setTimeout(r, BORROW_HOLD_MS));
    for (const keycode of this.borrowed.values()) this.x.changeKeyboardMapping(keycode, [0, 0]);
    this.borrowed.clear();
    await this.x.sync().catch(() => undefined);
  }
}
