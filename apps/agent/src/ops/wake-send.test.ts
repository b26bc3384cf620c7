import { DEFAULT_CEILING } from '@letkite/ceiling';
import { builtinPolicies } from '@letkite/policy';
import { LetKiteError, type NetworkReport, type RequestContext, WakeSendParams } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import type { CeilingState } from '../ceiling/ceiling-source';
import { type WakeTarget, wakeSend, wakeTargets } from './wake-send';

const lan: NetworkReport = [
  { name: 'eth0', mac: '52:54:00:00:00:01', ipv4: [{ address: '192.168.1.10', prefix: 24 }] },
  { name: 'wlan0', mac: '52:54:00:00:00:02', ipv4: [{ address: '10.20.0.5', prefix: 16 }] },
  { name: 'tun0', mac: '52:54:00:00:00:03', ipv4: [{ address: '100.64.0.1', prefix: 32 }] },
];

function ceiling(wake: boolean): CeilingState {
  return { source: 'file', ceiling: { ...DEFAULT_CEILING, wake }, path: '/etc/letkite/ceiling.toml' };
}

function recorder() {
  const sent: { packet: number[]; target: WakeTarget }[] = [];
  return {
    sent,
    deps: {
      interfaces: () => lan,
      send: async (packet: Uint8Array, target: WakeTarget) => {
        sent.push({ packet: [...packet], target });
      },
    },
  };
}

const params = (over: Record<string, unknown> = {}) =>
  WakeSendParams.parse({ tool: 'wake_device', mac: '52:54:00:aa:bb:cc', ...over });
const context: RequestContext = { policy: 'full', actor: 'token:test' };

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof LetKiteError ? err.code : String(err);
  }
  return 'ok';
}

describe('wake_send on the agent', () => {
  test('the ceiling has the last word: wake = false refuses, and nothing is sent', async () => {
    const r = recorder();
    expect(await codeOf(wakeSend(params(), context, ceiling(false), r.deps))).toBe('blocked_by_ceiling');
    expect(r.sent).toEqual([]);
  });

  test('an invalid ceiling refuses everything', async () => {
    const r = recorder();
    const broken: CeilingState = { source: 'error', error: 'bad', path: '/etc/letkite/ceiling.toml' } as CeilingState;
    expect(await codeOf(wakeSend(params(), context, broken, r.deps))).toBe('blocked_by_ceiling');
    expect(r.sent).toEqual([]);
  });

  test('a policy that lists the tool under approval.tools needs the human approval here too', async () => {
    const r = recorder();
    const full = builtinPolicies.full;
    const gated = { ...full, name: 'gated', approval: { ...full.approval, tools: ['wake_device'] } };
    const refused = wakeSend(params(), { policy: gated }, ceiling(true), r.deps);
    expect(await codeOf(refused)).toBe('blocked_by_policy');
    expect(r.sent).toEqual([]);
    // wake_node is not listed, so the same policy lets it through.
    await wakeSend(params({ tool: 'wake_node', broadcast: '192.168.1.255' }), { policy: gated }, ceiling(true), r.deps);
    expect(r.sent).toHaveLength(1);
  });

  test('sends the magic packet to the broadcast address of every network of the machine by default', async () => {
    const r = recorder();
    const result = await wakeSend(params(), context, ceiling(true), r.deps);
    expect(result.sent).toEqual([
      { interface: 'eth0', broadcast: '192.168.1.255', port: 9 },
      { interface: 'wlan0', broadcast: '10.20.255.255', port: 9 },
    ]);
    expect(result.bytes).toBe(102);
    const packet = r.sent[0]?.packet ?? [];
    expect(packet.slice(0, 6)).toEqual([255, 255, 255, 255, 255, 255]);
    expect(packet.slice(6, 12)).toEqual([0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc]);
    expect(r.sent.map((s) => s.target.bindAddress)).toEqual(['192.168.1.10', '10.20.0.5']);
  });

  test('a broadcast address picks the interface whose network holds it; another goes where the system routes it', () => {
    expect(wakeTargets({ broadcast: '10.20.255.255' }, lan)).toEqual([
      { interface: 'wlan0', broadcast: '10.20.255.255', bindAddress: '10.20.0.5' },
    ]);
    expect(wakeTargets({ broadcast: '255.255.255.255' }, lan)).toEqual([
      { interface: null, broadcast: '255.255.255.255', bindAddress: null },
    ]);
    expect(wakeTargets({ interface: 'eth0', broadcast: '192.168.1.255' }, lan)).toEqual([
      { interface: 'eth0', broadcast: '192.168.1.255', bindAddress: '192.168.1.10' },
    ]);
  });

  test('an unknown interface, or a machine without an IPv4 network, is not_found', () => {
    expect(() => wakeTargets({ interface: 'eth9' }, lan)).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => wakeTargets({}, [])).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});
