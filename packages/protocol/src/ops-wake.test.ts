import { describe, expect, test } from 'vitest';
import { AgentInfo } from './messages';
import {
  ipv4Broadcast,
  ipv4InSubnet,
  ipv4Network,
  MAGIC_PACKET_BYTES,
  MacAddress,
  magicPacket,
  normalizeMac,
  WakeSendParams,
} from './ops-wake';

describe('Wake-on-LAN wire facts', () => {
  test('the magic packet is 6 × 0xFF then the MAC 16 times', () => {
    const p = magicPacket('52:54:00:AB:cd:0F');
    expect(p.length).toBe(MAGIC_PACKET_BYTES);
    expect([...p.slice(0, 6)]).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    for (let i = 0; i < 16; i++)
      expect([...p.slice(6 + i * 6, 12 + i * 6)]).toEqual([0x52, 0x54, 0x00, 0xab, 0xcd, 0x0f]);
    expect(() => magicPacket('52:54:00')).toThrow();
  });

  test.each([
    ['52:54:00:ab:cd:0f', '52:54:00:ab:cd:0f'],
    ['52-54-00-AB-CD-0F', '52:54:00:ab:cd:0f'],
    ['525400abcd0f', '52:54:00:ab:cd:0f'],
  ])('the MAC %s reads as %s', (text, mac) => {
    expect(MacAddress.parse(text)).toBe(mac);
    expect(normalizeMac(text)).toBe(mac);
  });

  test.each(['52:54:00:ab:cd', '52:54-00:ab:cd:0f', 'zz:54:00:ab:cd:0f', '52:54:00:ab:cd:0f:00', ''])(
    'the MAC "%s" is refused',
    (text) => {
      expect(MacAddress.safeParse(text).success).toBe(false);
    },
  );

  test.each([
    ['10.1.2.3', 24, '10.1.2.0', '10.1.2.255'],
    ['192.168.7.130', 25, '192.168.7.128', '192.168.7.255'],
    ['172.16.5.9', 12, '172.16.0.0', '172.31.255.255'],
    ['10.0.0.1', 32, '10.0.0.1', '10.0.0.1'],
    ['203.0.113.77', 0, '0.0.0.0', '255.255.255.255'],
  ])('%s/%d is in %s with broadcast %s', (address, prefix, network, broadcast) => {
    expect(ipv4Network(address, prefix)).toBe(network);
    expect(ipv4Broadcast(address, prefix)).toBe(broadcast);
  });

  test('subnet membership compares the network part only', () => {
    expect(ipv4InSubnet('10.1.2.200', '10.1.2.3', 24)).toBe(true);
    expect(ipv4InSubnet('10.1.3.1', '10.1.2.3', 24)).toBe(false);
    expect(ipv4InSubnet('10.1.3.1', '10.1.2.3', 16)).toBe(true);
  });

  test('wake_send params name the tool, and accept only IPv4 broadcast addresses', () => {
    expect(WakeSendParams.parse({ tool: 'wake_device', mac: 'AA-BB-CC-DD-EE-FF' })).toEqual({
      tool: 'wake_device',
      mac: 'aa:bb:cc:dd:ee:ff',
    });
    expect(WakeSendParams.safeParse({ tool: 'exec', mac: 'aa:bb:cc:dd:ee:ff' }).success).toBe(false);
    expect(
      WakeSendParams.safeParse({ tool: 'wake_node', mac: 'aa:bb:cc:dd:ee:ff', broadcast: '10.0.0.256' }).success,
    ).toBe(false);
  });

  test("an agent's network report is optional, and a bad one is dropped instead of refusing the agent", () => {
    const base = { hostname: 'h', os: 'linux', arch: 'x64', version: '1', protocol: 1 };
    expect(AgentInfo.parse(base).network).toBeUndefined();
    const good = {
      ...base,
      network: [{ name: 'eth0', mac: '52:54:00:12:34:56', ipv4: [{ address: '10.0.0.2', prefix: 24 }] }],
    };
    expect(AgentInfo.parse(good).network).toEqual(good.network);
    const bad = { ...base, network: [{ name: 'eth0', mac: 'not-a-mac', ipv4: [] }] };
    expect(AgentInfo.parse(bad)).toMatchObject({ hostname: 'h', network: undefined });
  });
});
