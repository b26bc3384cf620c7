import type { NetworkReport } from '@letkite/protocol';
import { expect, test } from 'vitest';
import type { Machine } from '../../store/types';
import { wakeRoutes } from './wake';

const machine = (id: string) => ({ id, name: id }) as Machine;
const iface = (name: string, mac: string, ...cidrs: string[]): NetworkReport[number] => ({
  name,
  mac,
  ipv4: cidrs.map((c) => {
    const [address = '', prefix = '24'] = c.split('/');
    return { address, prefix: Number(prefix) };
  }),
});

const sleeper: NetworkReport = [
  iface('eno1', '52:54:00:00:00:aa', '192.168.1.20/24'),
  iface('wg0', '52:54:00:00:00:ab', '10.9.0.2/32'),
];

test('a route needs an interface on the same subnet (same network and prefix), and wakes the MAC that is there', () => {
  const routes = wakeRoutes(sleeper, [
    { machine: machine('elsewhere'), network: [iface('eth0', '52:54:00:00:00:01', '172.17.0.5/16')] },
    { machine: machine('wider'), network: [iface('eth0', '52:54:00:00:00:02', '192.168.1.30/16')] },
    { machine: machine('lan'), network: [iface('eth1', '52:54:00:00:00:03', '10.1.0.3/8', '192.168.1.31/24')] },
  ]);
  expect(routes.map((r) => [r.via.id, r.interface, r.broadcast, r.mac])).toEqual([
    ['lan', 'eth1', '192.168.1.255', '52:54:00:00:00:aa'],
  ]);
});

test('point-to-point links (/31, /32) are never a route: they have no broadcast', () => {
  const routes = wakeRoutes(sleeper, [
    { machine: machine('vpn'), network: [iface('wg0', '52:54:00:00:00:04', '10.9.0.2/32')] },
  ]);
  expect(routes).toEqual([]);
});
