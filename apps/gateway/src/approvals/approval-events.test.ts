import { randomBytes } from 'node:crypto';
import { expect, test } from 'vitest';
import { LocalCoordination } from '../coordination/local-coordination';
import { NatsCoordination } from '../coordination/nats-coordination';
import { ApprovalEvents } from './approval-events';

async function woken(events: ApprovalEvents, id: string, ms = 3000): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      off();
      resolve(false);
    }, ms);
    const off = events.onChange(id, () => {
      clearTimeout(timer);
      off();
      resolve(true);
    });
  });
}

test('a change announced on one gateway wakes the waiter of that request only, in one process', async () => {
  const c = new LocalCoordination();
  const events = new ApprovalEvents(c);
  const other = woken(events, 'apr_other', 200);
  const mine = woken(events, 'apr_1');
  events.changed('apr_1');
  expect(await mine).toBe(true);
  expect(await other).toBe(false);
  events.close();
  await c.close();
});

test('a decision on gateway A wakes approval_wait on gateway B over NATS', async () => {
  const prefix = `lktest${randomBytes(4).toString('hex')}`;
  const url = process.env.LETKITE_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
  const [ca, cb] = await Promise.all([
    NatsCoordination.connect({ url, prefix }),
    NatsCoordination.connect({ url, prefix }),
  ]);
  const onA = new ApprovalEvents(ca);
  const onB = new ApprovalEvents(cb);
  const waiting = woken(onB, 'apr_across');
  await cb.events.flush();
  onA.changed('apr_across');
  expect(await waiting).toBe(true);
  onA.close();
  onB.close();
  await ca.close();
  await cb.close();
});
