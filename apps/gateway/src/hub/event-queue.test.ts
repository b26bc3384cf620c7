import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { EventQueue } from './event-queue';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('EventQueue', () => {
  test('reads in order, then ends after what was pushed before end()', async () => {
    const q = new EventQueue<number>();
    q.push(1, 10);
    q.push(2, 20);
    expect(q.queuedBytes).toBe(30);
    q.end();
    q.push(3);
    const seen: number[] = [];
    for await (const n of q) seen.push(n);
    expect(seen).toEqual([1, 2]);
    expect(q.queuedBytes).toBe(0);
  });

  test('an event already read is no longer held by the queue (a data frame is not kept until a compaction)', async () => {
    const q = new EventQueue<{ frame: Buffer }>();
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 3; i++) {
      const item = { frame: Buffer.alloc(1024) };
      refs.push(new WeakRef(item));
      q.push(item, 1024);
    }
    const reader = q[Symbol.asyncIterator]();
    await reader.next();
    await reader.next();
    // Let the awaited results go, then collect.
    await new Promise((r) => setImmediate(r));
    gc();
    expect(refs[0]?.deref()).toBeUndefined();
    expect(refs[1]?.deref()).toBeUndefined();
    expect(refs[2]?.deref()).toBeDefined();
    expect(q.queuedBytes).toBe(1024);
  });
});
