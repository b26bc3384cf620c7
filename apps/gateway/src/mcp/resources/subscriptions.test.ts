import { afterEach, expect, test } from 'vitest';
import type { Principal } from '../../auth/principal';
import { LocalCoordination } from '../../coordination/local-coordination';
import type { GatewayDeps } from '../../deps';
import type { ResourceContext } from './read-resource';
import { ResourceSubscriptions } from './subscriptions';

const principal = { credentialId: 'tok_1', accountId: 'acc_1', userId: 'usr_1' } as Principal;
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

/** machines_list answers whatever `machines` holds at the time of the look. */
function setup() {
  let machines = [{ id: 'm1', name: 'one', online: true }];
  const context: ResourceContext = {
    deps: {} as GatewayDeps,
    principal,
    invoke: async () => ({ content: [{ type: 'text', text: '' }], structuredContent: { machines } }),
    callable: async () => new Set(['machines_list']),
  };
  const coordination = new LocalCoordination();
  // A long interval: the test drives the looks itself.
  const subs = new ResourceSubscriptions(coordination, () => context, 3_600_000);
  open.push(subs, coordination);
  return { subs, coordination, set: (m: typeof machines) => (machines = m) };
}

test('a change after the first look is announced once; an unsubscribed URI is not', async () => {
  const { subs, set } = setup();
  const updates: string[] = [];
  const remove = subs.addChannel('mcs_a', {
    principal,
    notify: async (uri) => void updates.push(uri),
    close: () => {},
  });
  await subs.subscribe('mcs_a', 'letkite://machines');
  await subs.tick();
  await subs.tick();
  expect(updates).toEqual([]);
  set([{ id: 'm1', name: 'one', online: false }]);
  await subs.tick();
  await subs.tick();
  expect(updates).toEqual(['letkite://machines']);
  await subs.unsubscribe('mcs_a', 'letkite://machines');
  set([]);
  await subs.tick();
  expect(updates).toEqual(['letkite://machines']);
  remove();
});

test("a machine's heartbeat (last_seen_at) alone is no change", async () => {
  const { subs, set } = setup();
  const updates: string[] = [];
  subs.addChannel('mcs_d', { principal, notify: async (uri) => void updates.push(uri), close: () => {} });
  await subs.subscribe('mcs_d', 'letkite://machines');
  set([{ id: 'm1', name: 'one', online: true, last_seen_at: '2026-01-01T00:00:00.000Z' } as never]);
  await subs.tick();
  set([{ id: 'm1', name: 'one', online: true, last_seen_at: '2026-01-01T00:01:00.000Z' } as never]);
  await subs.tick();
  expect(updates).toEqual([]);
  set([{ id: 'm1', name: 'one', online: false, last_seen_at: '2026-01-01T00:01:00.000Z' } as never]);
  await subs.tick();
  expect(updates).toEqual(['letkite://machines']);
});

test('a subscription made on another gateway reaches the one holding the stream', async () => {
  const { subs, coordination, set } = setup();
  const other = new ResourceSubscriptions(coordination, () => ({}) as ResourceContext, 3_600_000);
  open.push(other);
  const updates: string[] = [];
  subs.addChannel('mcs_b', { principal, notify: async (uri) => void updates.push(uri), close: () => {} });
  await other.subscribe('mcs_b', 'letkite://machines');
  await coordination.events.flush();
  await subs.tick();
  set([]);
  await subs.tick();
  expect(updates).toEqual(['letkite://machines']);
});

test('at most 32 subscriptions per session', async () => {
  const { subs } = setup();
  for (let i = 0; i < 32; i++) await subs.subscribe('mcs_c', `letkite://machines/m${i}`);
  await expect(subs.subscribe('mcs_c', 'letkite://machines/one-more')).rejects.toMatchObject({ code: 'rate_limited' });
  // Subscribing again to one it has is no new subscription.
  await subs.subscribe('mcs_c', 'letkite://machines/m0');
});
