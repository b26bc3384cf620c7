import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';

/**
 * Test support for the screen tools: a private Xvfb (a display number it picks itself with -displayfd, so
 * parallel tests never share one), real X applications on it, and a PNG reader to check pixels.
 * `LETKITE_TEST_XVFB` may name another command that starts Xvfb (words split on spaces).
 */

function xvfbCommand(): string[] {
  const custom = process.env.LETKITE_TEST_XVFB;
  return custom ? custom.split(' ').filter(Boolean) : ['Xvfb'];
}

/** Whether an Xvfb can be started here (CI installs it; a test run without it must not pass silently in CI). */
export function xvfbAvailable(): boolean {
  const [program] = xvfbCommand();
  if (!program) return false;
  if (program.includes('/')) return existsSync(program);
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface TestDisplay {
  display: string;
  stop(): Promise<void>;
}

/** Starts Xvfb with one 24-bit screen and waits until it accepts clients. */
export async function startXvfb(width = 1024, height = 768): Promise<TestDisplay> {
  const [program, ...pre] = xvfbCommand();
  const child = spawn(
    program as string,
    [...pre, '-displayfd', '3', '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp', '-noreset'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const number = await new Promise<string>((resolve, reject) => {
    let out = '';
    const fd3 = child.stdio[3] as NodeJS.ReadableStream;
    fd3.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`Xvfb exited (${code}): ${stderr}`)));
    setTimeout(() => reject(new Error(`Xvfb did not start: ${stderr}`)), 20_000).unref();
  });
  return {
    display: `:${number}`,
    stop: () => stopChild(child),
  };
}

/** Ends a child this test started and waits for it. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/** A tiny Tk form: one text field whose content is written to `outFile` after every key. */
export function writeTkForm(dir: string): string {
  const script = join(dir, 'form.py');
  writeFileSync(
    script,
    [
      'import sys, tkinter as tk',
      'out, cls, title, geometry = sys.argv[1:5]',
      'root = tk.Tk(className=cls)',
      'root.title(title)',
      'root.geometry(geometry)',
      "root.configure(background='#3366cc')",
      'entry = tk.Entry(root, width=30)',
      'entry.pack(padx=20, pady=20)',
      'entry.focus_set()',
      'def save(*_):',
      "    with open(out, 'w') as f: f.write(entry.get())",
      "entry.bind('<KeyRelease>', save)",
      "root.after(100, lambda: print('ready', flush=True))",
      'root.mainloop()',
      '',
    ].join('\n'),
  );
  return script;
}

/** Decodes an 8-bit RGB PNG (as encodePng writes it) into its pixels. */
export function decodePng(png: Buffer): { width: number; height: number; rgb: Buffer } {
  let at = 8;
  const idat: Buffer[] = [];
  let width = 0;
  let height = 0;
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('latin1');
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[9] !== 2) throw new Error('not an 8-bit RGB PNG');
    }
    if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * 3;
  const rgb = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    if (raw[y * (stride + 1)] !== 0) throw new Error('unexpected PNG filter');
    raw.copy(rgb, y * stride, y * (stride + 1) + 1, (y + 1) * (stride + 1));
  }
  return { width, height, rgb };
}

/** Counts the pixels of a rectangle that are not pure black. */
export function nonBlackPixels(
  img: { width: number; rgb: Buffer },
  rect: { x: number; y: number; width: number; height: number },
): number {
  let count = 0;
  for (let y = rect.y; y < rect.y + rect.height; y++) {
    for (let x = rect.x; x < rect.x + rect.width; x++) {
      const i = (y * img.width + x) * 3;
      if (img.rgb[i] !== 0 || img.rgb[i + 1] !== 0 || img.rgb[i + 2] !== 0) count++;
    }
  }
  return count;
}

/** The screen rectangles of an xmessage window's buttons, left to right (read with xwininfo, not our code). */
export function xmessageButtons(
  display: string,
  windowId: number,
): { x: number; y: number; width: number; height: number }[] {
  const tree = execFileSync('xwininfo', ['-display', display, '-id', String(windowId), '-tree'], { encoding: 'utf8' });
  const boxes: { x: number; y: number; width: number; height: number }[] = [];
  for (const m of tree.matchAll(/(\d+)x(\d+)\+-?\d+\+-?\d+\s+\+(-?\d+)\+(-?\d+)/g)) {
    boxes.push({ width: Number(m[1]), height: Number(m[2]), x: Number(m[3]), y: Number(m[4]) });
  }
  // The buttons are the lowest row of widgets.
  const bottom = Math.max(...boxes.map((b) => b.y));
  return boxes.filter((b) => b.y === bottom && b.height < 40).sort((a, b) => a.x - b.x);
}
