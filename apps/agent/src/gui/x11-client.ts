import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { LetKiteError } from '@letkite/protocol';

/**
 * A small X11 protocol client: just the requests the screen tools need (window tree, properties, geometry,
 * focus, pointer, keyboard mapping, GetImage, server grabs, XTest fake input), over the display's local Unix
 * socket. Written here instead of spawning xdotool/import so that blacking out happens on the raw pixels inside
 * the agent and nothing else has to be installed on the machine.
 */

/** Atoms every X server predefines. */
export const ATOM = { STRING: 31, WM_NAME: 39, WM_CLASS: 67 } as const;

/** X's special focus values. */
export const FOCUS_NONE = 0;
export const FOCUS_POINTER_ROOT = 1;

/** Core event types as XTest fakes them. */
export const XEVENT = { KeyPress: 2, KeyRelease: 3, ButtonPress: 4, ButtonRelease: 5, MotionNotify: 6 } as const;

export interface ScreenInfo {
  root: number;
  width: number;
  height: number;
  depth: number;
  bitsPerPixel: number;
  redMask: number;
  greenMask: number;
  blueMask: number;
}

export interface WindowAttributes {
  /** 0 unmapped, 1 unviewable, 2 viewable. */
  mapState: number;
  overrideRedirect: boolean;
  /** 1 InputOutput, 2 InputOnly. */
  windowClass: number;
}

export interface Geometry {
  x: number;
  y: number;
  width: number;
  height: number;
  border: number;
}

interface Pending {
  resolve: (reply: Buffer) => void;
  reject: (err: Error) => void;
}

const pad4 = (n: number) => (4 - (n % 4)) % 4;

/** How long one request may wait for its reply (and the connection setup for the server's answer). */
const REPLY_TIMEOUT_MS = 15_000;

/** ":0", ":0.0", "unix:0" → display number; anything naming another host (TCP) is refused. */
export function localDisplayNumber(display: string): number {
  const m = /^(?:unix)?:(\d{1,4})(?:\.\d{1,3})?$/.exec(display);
  if (!m) {
    throw new LetKiteError(
      'unsupported',
      `the agent's display "${display}" is not a local X11 display (":N"); only this machine's own screen can be used`,
      { layer: 'agent', key: 'DISPLAY' },
    );
  }
  return Number(m[1]);
}

/** The MIT-MAGIC-COOKIE-1 for a local display from an Xauthority file, or null (then the server must allow us). */
export function xauthCookie(file: string | undefined, displayNumber: number, hostname: string): Buffer | null {
  if (!file) return null;
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return null;
  }
  let at = 0;
  const field = (): Buffer | null => {
    if (at + 2 > data.length) return null;
    const len = data.readUInt16BE(at);
    at += 2;
    if (at + len > data.length) return null;
    const value = data.subarray(at, at + len);
    at += len;
    return value;
  };
  while (at + 2 <= data.length) {
    const family = data.readUInt16BE(at);
    at += 2;
    const address = field();
    const number = field();
    const name = field();
    const cookie = field();
    if (!address || !number || !name || !cookie) return null;
    // 256 FamilyLocal (this host's name), 65535 FamilyWild (any).
    const hostMatches = family === 65535 || (family === 256 && address.toString('latin1') === hostname);
    const numberMatches = number.length === 0 || number.toString('latin1') === String(displayNumber);
    if (hostMatches && numberMatches && name.toString('latin1') === 'MIT-MAGIC-COOKIE-1') return Buffer.from(cookie);
  }
  return null;
}

export class X11Client {
  private buffer: Buffer = Buffer.alloc(0);
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  /** Errors of requests without a reply, reported by the next round trip. */
  private voidErrors: Error[] = [];
  private closed: Error | null = null;
  private readonly atoms = new Map<string, number>();
  private xtestOpcode: number | null = null;
  screen!: ScreenInfo;
  minKeycode = 8;
  maxKeycode = 255;

  private constructor(private readonly socket: Socket) {}

  /** Connects to a local display (":N") with the cookie from `xauthority` when the server wants one. */
  static async connect(display: string, options: { xauthority?: string; hostname: string }): Promise<X11Client> {
    const number = localDisplayNumber(display);
    const open = (path: string) =>
      new Promise<Socket>((resolve, reject) => {
        const s = connect(path);
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      });
    // The socket file, else the same name in the abstract namespace (servers whose /tmp socket is not visible here).
    const path = `/tmp/.X11-unix/X${number}`;
    const socket = await open(path)
      .catch(() => open(`\0${path}`))
      .catch((err: Error) => {
        throw new LetKiteError('unsupported', `cannot reach the X11 display "${display}": ${err.message}`, {
          layer: 'agent',
          key: 'DISPLAY',
        });
      });
    const client = new X11Client(socket);
    try {
      await client.handshake(xauthCookie(options.xauthority, number, options.hostname));
    } catch (err) {
      socket.destroy();
      throw err;
    }
    return client;
  }

  close(): void {
    this.socket.destroy();
  }

  private async handshake(cookie: Buffer | null): Promise<void> {
    const name = cookie ? Buffer.from('MIT-MAGIC-COOKIE-1', 'latin1') : Buffer.alloc(0);
    const data = cookie ?? Buffer.alloc(0);
    const head = Buffer.alloc(12);
    head.write('l', 0, 'latin1');
    head.writeUInt16LE(11, 2);
    head.writeUInt16LE(0, 4);
    head.writeUInt16LE(name.length, 6);
    head.writeUInt16LE(data.length, 8);
    this.socket.write(
      Buffer.concat([head, name, Buffer.alloc(pad4(name.length)), data, Buffer.alloc(pad4(data.length))]),
    );
    const setup = await new Promise<Buffer>((resolve, reject) => {
      let got: Buffer = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        if (got.length < 8) return;
        const total = 8 + got.readUInt16LE(6) * 4;
        if (got.length < total) return;
        this.socket.off('data', onData);
        this.buffer = got.subarray(total);
        resolve(got.subarray(0, total));
      };
      this.socket.on('data', onData);
      this.socket.once('error', reject);
      setTimeout(
        () => reject(new LetKiteError('timeout', 'the X11 display did not answer the connection setup')),
        REPLY_TIMEOUT_MS,
      ).unref();
      this.socket.once('close', () => reject(new LetKiteError('unsupported', 'the X11 display closed the connection')));
    });
    if (setup[0] !== 1) {
      const reason = setup.subarray(8, 8 + (setup[1] ?? 0)).toString('latin1');
      throw new LetKiteError('unsupported', `the X11 display refused the agent: ${reason || 'authentication'}`, {
        layer: 'agent',
      });
    }
    this.parseSetup(setup);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (err: Error) => {
      this.closed = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.socket.on('error', fail);
    this.socket.on('close', () => fail(new LetKiteError('unsupported', 'the X11 display closed the connection')));
  }

  private parseSetup(s: Buffer): void {
    const vendorLength = s.readUInt16LE(24);
    const formatCount = s.readUInt8(29);
    this.minKeycode = s.readUInt8(34);
    this.maxKeycode = s.readUInt8(35);
    let at = 40 + vendorLength + pad4(vendorLength);
    const bpp = new Map<number, number>();
    for (let i = 0; i < formatCount; i++, at += 8) bpp.set(s.readUInt8(at), s.readUInt8(at + 1));
    // The first screen: a display with several screens is driven on its default one.
    const root = s.readUInt32LE(at);
    const width = s.readUInt16LE(at + 20);
    const height = s.readUInt16LE(at + 22);
    const rootVisual = s.readUInt32LE(at + 32);
    const depth = s.readUInt8(at + 38);
    const depthCount = s.readUInt8(at + 39);
    at += 40;
    let masks = { red: 0, green: 0, blue: 0 };
    for (let d = 0; d < depthCount; d++) {
      const visuals = s.readUInt16LE(at + 2);
      at += 8;
      for (let v = 0; v < visuals; v++, at += 24) {
        if (s.readUInt32LE(at) === rootVisual) {
          masks = { red: s.readUInt32LE(at + 8), green: s.readUInt32LE(at + 12), blue: s.readUInt32LE(at + 16) };
        }
      }
    }
    this.screen = {
      root,
      width,
      height,
      depth,
      bitsPerPixel: bpp.get(depth) ?? 0,
      redMask: masks.red,
      greenMask: masks.green,
      blueMask: masks.blue,
    };
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 32) {
      const kind = this.buffer.readUInt8(0);
      const length = kind === 1 || kind === 35 ? 32 + this.buffer.readUInt32LE(4) * 4 : 32;
      if (this.buffer.length < length) return;
      const message = this.buffer.subarray(0, length);
      this.buffer = this.buffer.subarray(length);
      const seq = message.readUInt16LE(2);
      if (kind === 1) {
        const p = this.pending.get(seq);
        this.pending.delete(seq);
        p?.resolve(message);
      } else if (kind === 0) {
        const err = new LetKiteError(
          'internal',
          `X11 error ${message.readUInt8(1)} (request ${message.readUInt8(10)})`,
          {
            x_error: message.readUInt8(1),
            value: message.readUInt32LE(4),
          },
        );
        const p = this.pending.get(seq);
        this.pending.delete(seq);
        if (p) p.reject(err);
        else this.voidErrors.push(err);
      }
      // Events are never selected; any that arrive are dropped.
    }
  }

  /** Sends one request; the header's length is filled in. Returns its sequence number. */
  private send(opcode: number, data: number, body: Buffer = Buffer.alloc(0)): number {
    if (this.closed) throw this.closed;
    const padded = Buffer.concat([body, Buffer.alloc(pad4(body.length))]);
    const head = Buffer.alloc(4);
    head.writeUInt8(opcode, 0);
    head.writeUInt8(data, 1);
    head.writeUInt16LE(1 + padded.length / 4, 2);
    this.socket.write(Buffer.concat([head, padded]));
    this.seq = (this.seq + 1) & 0xffff;
    return this.seq;
  }

  private request(opcode: number, data: number, body?: Buffer): Promise<Buffer> {
    const seq = this.send(opcode, data, body);
    return new Promise((resolve, reject) => {
      // A server that stops answering (another client holding a grab, a hung server) must not hold the screen
      // tools forever: the call fails and the connection is dropped.
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new LetKiteError('timeout', `the X11 display did not answer within ${REPLY_TIMEOUT_MS / 1000} s`));
        this.socket.destroy();
      }, REPLY_TIMEOUT_MS);
      this.pending.set(seq, {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
    });
  }

  /** A round trip: every request sent before it has been processed; rejects with an error one of them caused. */
  async sync(): Promise<void> {
    await this.request(43, 0);
    const err = this.voidErrors.shift();
    this.voidErrors = [];
    if (err) throw err;
  }

  async internAtom(name: string): Promise<number> {
    const known = this.atoms.get(name);
    if (known !== undefined) return known;
    const bytes = Buffer.from(name, 'latin1');
    const body = Buffer.alloc(4);
    body.writeUInt16LE(bytes.length, 0);
    const reply = await this.request(16, 0, Buffer.concat([body, bytes]));
    const atom = reply.readUInt32LE(8);
    this.atoms.set(name, atom);
    return atom;
  }

  async queryTree(window: number): Promise<{ parent: number; children: number[] }> {
    const reply = await this.request(15, 0, u32(window));
    const count = reply.readUInt16LE(16);
    const children: number[] = [];
    for (let i = 0; i < count; i++) children.push(reply.readUInt32LE(32 + i * 4));
    return { parent: reply.readUInt32LE(12), children };
  }

  async windowAttributes(window: number): Promise<WindowAttributes> {
    const reply = await this.request(3, 0, u32(window));
    return {
      windowClass: reply.readUInt16LE(12),
      mapState: reply.readUInt8(26),
      overrideRedirect: reply.readUInt8(27) === 1,
    };
  }

  async geometry(drawable: number): Promise<Geometry> {
    const reply = await this.request(14, 0, u32(drawable));
    return {
      x: reply.readInt16LE(12),
      y: reply.readInt16LE(14),
      width: reply.readUInt16LE(16),
      height: reply.readUInt16LE(18),
      border: reply.readUInt16LE(20),
    };
  }

  /** A property's bytes (any type), at most `maxBytes`; null when the window does not have it. */
  async property(window: number, atom: number, maxBytes = 4096): Promise<Buffer | null> {
    const body = Buffer.alloc(20);
    body.writeUInt32LE(window, 0);
    body.writeUInt32LE(atom, 4);
    body.writeUInt32LE(0, 8); // AnyPropertyType
    body.writeUInt32LE(0, 12);
    body.writeUInt32LE(Math.ceil(maxBytes / 4), 16);
    const reply = await this.request(20, 0, body);
    const format = reply.readUInt8(1);
    if (reply.readUInt32LE(8) === 0) return null;
    const bytes = reply.readUInt32LE(16) * (format / 8);
    return Buffer.from(reply.subarray(32, 32 + bytes));
  }

  async inputFocus(): Promise<number> {
    const reply = await this.request(43, 0);
    return reply.readUInt32LE(8);
  }

  /** The pointer on the root window: where it is and which child of the root it is over (0: none). */
  async queryPointer(): Promise<{ x: number; y: number; child: number }> {
    const reply = await this.request(38, 0, u32(this.screen.root));
    return { child: reply.readUInt32LE(12), x: reply.readInt16LE(16), y: reply.readInt16LE(18) };
  }

  /** The whole keyboard mapping: keysyms per keycode, from minKeycode. */
  async keyboardMapping(): Promise<{ perKeycode: number; keysyms: number[][] }> {
    const count = this.maxKeycode - this.minKeycode + 1;
    const body = Buffer.alloc(4);
    body.writeUInt8(this.minKeycode, 0);
    body.writeUInt8(count, 1);
    const reply = await this.request(101, 0, body);
    const per = reply.readUInt8(1);
    const keysyms: number[][] = [];
    for (let k = 0; k < count; k++) {
      const row: number[] = [];
      for (let i = 0; i < per; i++) row.push(reply.readUInt32LE(32 + (k * per + i) * 4));
      keysyms.push(row);
    }
    return { perKeycode: per, keysyms };
  }

  /** Maps one keycode to these keysyms (used for a character the keyboard has no key for). */
  changeKeyboardMapping(keycode: number, keysyms: readonly number[]): void {
    const body = Buffer.alloc(4 + keysyms.length * 4);
    body.writeUInt8(keycode, 0);
    body.writeUInt8(keysyms.length, 1);
    for (const [i, k] of keysyms.entries()) body.writeUInt32LE(k, 4 + i * 4);
    this.send(100, 1, body);
  }

  grabServer(): void {
    this.send(36, 0);
  }

  ungrabServer(): void {
    this.send(37, 0);
  }

  /** The root window's pixels in a rectangle, as ZPixmap rows (the server's pixel format, see `screen`). */
  async image(x: number, y: number, width: number, height: number): Promise<Buffer> {
    const body = Buffer.alloc(16);
    body.writeUInt32LE(this.screen.root, 0);
    body.writeInt16LE(x, 4);
    body.writeInt16LE(y, 6);
    body.writeUInt16LE(width, 8);
    body.writeUInt16LE(height, 10);
    body.writeUInt32LE(0xffffffff, 12);
    const reply = await this.request(73, 2, body);
    return reply.subarray(32);
  }

  /** Whether the server has XTest; loads its opcode. */
  async hasXTest(): Promise<boolean> {
    if (this.xtestOpcode !== null) return true;
    const name = Buffer.from('XTEST', 'latin1');
    const body = Buffer.alloc(4);
    body.writeUInt16LE(name.length, 0);
    const reply = await this.request(98, 0, Buffer.concat([body, name]));
    if (reply.readUInt8(8) !== 1) return false;
    this.xtestOpcode = reply.readUInt8(9);
    return true;
  }

  /** XTestFakeInput: a key, button or absolute pointer motion on the default screen, as if from a device. */
  fakeInput(type: number, detail: number, x = 0, y = 0): void {
    if (this.xtestOpcode === null) throw new LetKiteError('internal', 'XTest was not initialised');
    const body = Buffer.alloc(32);
    body.writeUInt8(type, 0);
    body.writeUInt8(detail, 1);
    body.writeUInt32LE(0, 4); // CurrentTime
    body.writeUInt32LE(type === XEVENT.MotionNotify ? this.screen.root : 0, 8);
    body.writeInt16LE(x, 20);
    body.writeInt16LE(y, 22);
    this.send(this.xtestOpcode, 2, body);
  }
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value, 0);
  return b;
}
