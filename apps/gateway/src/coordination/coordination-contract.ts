import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Coordination, EventPayload } from './coordination';

/** Two gateways' views of one cluster (for embedded mode both may be the same object). */
export interface CoordinationCluster {
  a: Coordination;
  b: Coordination;
  close(): Promise<void>;
}

async function eventually(check: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

let unique = 0;
/** A fresh name per test, so runs against a long-lived server (NATS) never see each other's state. */
function fresh(prefix: string): string {
  unique += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${unique}`;
}

/**
 * The behaviour every Coordination implementation must have, run against each one (local-coordination.test.ts,
 * nats-coordination.test.ts). Cases speak of two gateways, A and B, sharing one cluster.
 */
export function coordinationContract(name: string, open: () => Promise<CoordinationCluster>): void {
  describe(`Coordination contract: ${name}`, () => {
    let cluster: CoordinationCluster;
    beforeAll(async () => {
      cluster = await open();
    });
    afterAll(async () => {
      await cluster?.close();
    });

    test('an event published on one gateway reaches subscribers on every gateway, with its payload', async () => {
      const topic = `test.${fresh('ev')}`;
      const onA: EventPayload[] = [];
      const onB: EventPayload[] = [];
      const offA = cluster.a.events.subscribe(topic, (p) => onA.push(p));
      const offB = cluster.b.events.subscribe(topic, (p) => onB.push(p));
      await cluster.a.events.flush();
      await cluster.b.events.flush();
      await cluster.a.events.publish(topic, { id: 'x1', n: 2 });
      await eventually(() => onA.length === 1 && onB.length === 1);
      expect(onB[0]).toEqual({ id: 'x1', n: 2 });
      offA();
      offB();
    });

    test('an unsubscribed listener and a listener on another topic hear nothing', async () => {
      const topic = `test.${fresh('ev')}`;
      const heard: string[] = [];
      const off = cluster.b.events.subscribe(topic, () => heard.push('off'));
      const other = cluster.b.events.subscribe(`${topic}.other`, () => heard.push('other'));
      const control = cluster.b.events.subscribe(topic, () => heard.push('control'));
      off();
      await cluster.b.events.flush();
      await cluster.a.events.publish(topic);
      await eventually(() => heard.includes('control'));
      await new Promise((r) => setTimeout(r, 50));
      expect(heard).toEqual(['control']);
      other();
      control();
    });

    test('a listener that throws does not stop the other listeners', async () => {
      const topic = `test.${fresh('ev')}`;
      let heard = 0;
      const bad = cluster.b.events.subscribe(topic, () => {
        throw new Error('listener bug');
      });
      const good = cluster.b.events.subscribe(topic, () => heard++);
      await cluster.b.events.flush();
      await cluster.a.events.publish(topic);
      await cluster.a.events.publish(topic);
      await eventually(() => heard === 2);
      bad();
      good();
    });

    test('a topic that is not dot-separated words is refused', async () => {
      await expect(cluster.a.events.publish('has space')).rejects.toThrow(/invalid coordination topic/);
      expect(() => cluster.a.events.subscribe('a..b', () => undefined)).toThrow(/invalid coordination topic/);
    });

    test('a fixed-window limiter allows `limit` hits per window, counted across gateways', async () => {
      const name = fresh('fixed');
      const options = { limit: 3, windowMs: 60_000 };
      const onA = cluster.a.limiter(name, options);
      const onB = cluster.b.limiter(name, options);
      const t = 1_000_000;
      expect((await onA.hit('k', t)).allowed).toBe(true);
      expect((await onB.hit('k', t + 1)).allowed).toBe(true);
      expect(await onA.hit('k', t + 2)).toEqual({ allowed: true, count: 3, retryAfterMs: 0 });
      expect(await onB.hit('k', t + 10_000)).toEqual({ allowed: false, count: 3, retryAfterMs: 50_000 });
      expect((await onB.hit('other', t + 10_000)).allowed).toBe(true);
      expect((await onA.state('k', t + 10_000)).allowed).toBe(false);
      // A new window starts once the old one is over.
      expect(await onA.hit('k', t + 60_000)).toEqual({ allowed: true, count: 1, retryAfterMs: 0 });
    });

    test('concurrent hits on two gateways are each counted: exactly `limit` are allowed', async () => {
      const name = fresh('race');
      const options = { limit: 5, windowMs: 60_000 };
      const onA = cluster.a.limiter(name, options);
      const onB = cluster.b.limiter(name, options);
      const t = 2_000_000;
      const hits = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? onA : onB).hit('victim', t)));
      expect(hits.filter((h) => h.allowed)).toHaveLength(5);
      expect(new Set(hits.filter((h) => h.allowed).map((h) => h.count))).toEqual(new Set([1, 2, 3, 4, 5]));
    });

    test('with backoff, `limit` hits are free and each further one waits twice as long, up to the cap', async () => {
      const name = fresh('backoff');
      const options = { limit: 2, windowMs: 600_000, backoff: { baseMs: 1000, maxMs: 4000 } };
      const l = cluster.a.limiter(name, options);
      const onB = cluster.b.limiter(name, options);
      const t = 3_000_000;
      expect((await l.hit('k', t)).allowed).toBe(true);
      expect((await l.hit('k', t)).allowed).toBe(true);
      expect(await onB.hit('k', t + 10)).toEqual({ allowed: false, count: 2, retryAfterMs: 990 });
      expect((await onB.hit('k', t + 1000)).allowed).toBe(true);
      expect((await l.hit('k', t + 2999)).retryAfterMs).toBe(1);
      expect((await l.hit('k', t + 3000)).allowed).toBe(true);
      expect((await l.hit('k', t + 6999)).retryAfterMs).toBe(1);
      expect((await l.hit('k', t + 7000)).allowed).toBe(true);
      // Capped at maxMs.
      expect((await l.hit('k', t + 7001)).retryAfterMs).toBe(3999);
      // Another key is not slowed at all.
      expect((await onB.hit('someone-else', t + 7001)).allowed).toBe(true);
      await onB.reset('k');
      expect(await l.hit('k', t + 7002)).toEqual({ allowed: true, count: 1, retryAfterMs: 0 });
    });

    test('with backoff, a quiet window forgets the count', async () => {
      const name = fresh('quiet');
      const l = cluster.a.limiter(name, { limit: 1, windowMs: 10_000, backoff: { baseMs: 1000, maxMs: 60_000 } });
      const t = 4_000_000;
      await l.hit('k', t);
      expect((await l.hit('k', t + 1000)).count).toBe(2);
      expect(await l.state('k', t + 1000 + 10_000)).toEqual({ allowed: true, count: 0, retryAfterMs: 0 });
      expect((await l.hit('k', t + 1000 + 10_000)).count).toBe(1);
    });

    test('a lease has one holder across gateways; the holder renews it and hands it over by releasing', async () => {
      const name = fresh('lease');
      const onA = cluster.a.lease(name, 60_000);
      const onB = cluster.b.lease(name, 60_000);
      expect(await onA.hold()).toBe(true);
      expect(await onB.hold()).toBe(false);
      expect(await onA.hold()).toBe(true);
      expect(await onB.hold()).toBe(false);
      await onB.release(); // not the holder: changes nothing
      expect(await onB.hold()).toBe(false);
      await onA.release();
      expect(await onB.hold()).toBe(true);
      expect(await onA.hold()).toBe(false);
      await onB.release();
    });

    test('concurrent attempts to take a free lease: exactly one wins', async () => {
      const name = fresh('lease-race');
      const handles = Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? cluster.a : cluster.b).lease(name, 60_000));
      const won = await Promise.all(handles.map((h) => h.hold()));
      expect(won.filter(Boolean)).toHaveLength(1);
      await Promise.all(handles.map((h) => h.release()));
    });

    test('a lease that is not renewed lapses after its ttl and another gateway takes it', async () => {
      const name = fresh('lease-ttl');
      const onA = cluster.a.lease(name, 300);
      const onB = cluster.b.lease(name, 300);
      expect(await onA.hold()).toBe(true);
      expect(await onB.hold()).toBe(false);
      await new Promise((r) => setTimeout(r, 450));
      expect(await onB.hold()).toBe(true);
      expect(await onA.hold()).toBe(false);
      await onB.release();
    });
  });
}
