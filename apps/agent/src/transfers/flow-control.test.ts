import { STREAM_RECORD_COST } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { CreditGate } from './credit-gate';
import { Inbox } from './inbox';

/**
 * Whether `promise` has settled once every pending microtask has run. The gate settles a sender's promise only
 * from grant() or fail(), synchronously, so this answer does not depend on timing or machine load (a sleep does).
 */
function stateOf(promise: Promise<unknown>): Promise<'pending' | 'resolved' | 'rejected'> {
  const settled = promise.then(
    () => 'resolved' as const,
    () => 'rejected' as const,
  );
  return Promise.race([settled, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

describe('CreditGate', () => {
  test('a sender waits until credit is granted, and may overdraw by one frame', async () => {
    const gate = new CreditGate();
    const first = gate.take(100);
    expect(await stateOf(first)).toBe('pending');
    gate.grant(150); // covers one frame and part of the next: two go out, the second overdrawing
    await first;
    await gate.take(100);
    const third = gate.take(100);
    expect(await stateOf(third)).toBe('pending');
    gate.grant(100);
    await third;
  });

  test('failing the gate ends a waiting sender with that error', async () => {
    const gate = new CreditGate();
    const waiting = gate.take(1);
    gate.fail(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    await expect(gate.take(1)).rejects.toThrow('cancelled');
  });
});

describe('Inbox', () => {
  const data = (n: number) => ({ type: 'data' as const, payload: [Buffer.alloc(n)], bytes: n });

  test('hands events over in order, and credit back as the receiver asks', async () => {
    const granted: number[] = [];
    const inbox = new Inbox(1000, (bytes) => granted.push(bytes));
    inbox.push(data(10));
    inbox.push({ type: 'entry_end', id: 'r1', bytes: 10, sha256: 'a'.repeat(64) });
    expect((await inbox.next()).type).toBe('data');
    expect((await inbox.next()).type).toBe('entry_end');
    inbox.credit(10 + STREAM_RECORD_COST);
    expect(granted).toEqual([10 + STREAM_RECORD_COST]);
    const later = inbox.next();
    inbox.push(data(5));
    expect((await later).type).toBe('data');
  });

  test('a sender that ignores its credit fails the stream instead of filling memory', async () => {
    const inbox = new Inbox(1024, () => undefined);
    for (let i = 0; i < 3; i++) inbox.push(data(512 * 1024));
    await expect(inbox.next()).rejects.toMatchObject({ code: 'protocol_error' });
  });
});
