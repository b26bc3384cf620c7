import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, FULL_SHELL_CEILING, mcpClient, RUN_AS, type TestAgent, TestGateway } from './support/letkite';
import { cliMain, removeDir, repoRoot, tempDir, waitFor } from './support/processes';
import { RogueGateway } from './support/rogue-gateway';

/**
 * Wake-on-LAN for real (issue #15): two network namespaces joined by a veth pair stand for a LAN. The sending
 * agent runs in namespace A; namespace B holds the "sleeping" machine's agent (run once so it reports its MAC and
 * subnet, then stopped) and a real UDP listener on port 9 that records every datagram's bytes. The agents reach the
 * gateway (host namespace, 127.0.0.1) through a forwarder in their namespace: TCP there → a Unix socket (Unix
 * sockets are not scoped by network namespace) → the gateway's port, so `http://localhost:PORT` means the same
 * gateway everywhere.
 */

const canNetns = process.getuid?.() === 0 && spawnSync('ip', ['netns', 'list']).status === 0;

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}

/** A process in a namespace with its output so far. */
class NsProcess {
  readonly child: ChildProcess;
  out = '';
  readonly exited: Promise<number | null>;
  constructor(ns: string, args: string[], env: Record<string, string> = {}, input?: string) {
    this.child = spawn('ip', ['netns', 'exec', ns, process.execPath, ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (c: Buffer) => {
      this.out += c.toString();
    });
    this.child.stderr?.on('data', (c: Buffer) => {
      this.out += c.toString();
    });
    if (input !== undefined) this.child.stdin?.end(input);
    else this.child.stdin?.end();
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }
  waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return waitFor(
      () => `${pattern} in:\n${this.out}`,
      () => this.out.match(pattern),
      timeoutMs,
    );
  }
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5000))]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Listens on 127.0.0.1 and ::1 PORT inside the namespace and carries each connection to the Unix socket. */
const FORWARDER = `
const net = require('node:net');
const [port, sock] = process.argv.slice(1);
net.createServer((c) => { const u = net.connect(sock); c.pipe(u); u.pipe(c); c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); })
  .listen({ port: Number(port), host: '::' }, () => console.log('forwarding'));
`;

/** Prints every datagram to UDP port 9 (any address, broadcasts included) as hex. */
const LISTENER = `
const s = require('node:dgram').createSocket('udp4');
s.on('message', (m, r) => console.log('packet ' + r.address + ' ' + m.toString('hex')));
s.bind(9, '0.0.0.0', () => console.log('listening'));
`;

function magicHex(mac: string): string {
  const m = mac.replace(/:/g, '');
  return 'ff'.repeat(6) + m.repeat(16);
}

describe.skipIf(!canNetns)("Wake-on-LAN through an agent on the sleeping machine's network (netns + veth)", () => {
  const tag = randomBytes(3).toString('hex');
  const nsA = `lkwake-${tag}-a`;
  const nsB = `lkwake-${tag}-b`;
  const vethA = `lkw${tag}a`;
  const vethB = `lkw${tag}b`;
  const octet = 16 + ((randomBytes(1)[0] ?? 0) % 200);
  const subnet = `10.213.${octet}`;
  const macB = `02:4c:4b:${tag.slice(0, 2)}:${tag.slice(2, 4)}:${tag.slice(4, 6)}`;
  let gw: TestGateway;
  let client: Client;
  const bridges: Server[] = [];
  let dir: string;
  const procs: NsProcess[] = [];
  const hostAgents: TestAgent[] = [];
  let listener: NsProcess;
  const agents = new Map<string, { proc: NsProcess; stateDir: string }>();

  /** A Unix socket in `dir` whose every connection is carried to 127.0.0.1:port of the host namespace. */
  async function bridgeTo(port: number, name: string): Promise<string> {
    const sock = join(dir, `${name}.sock`);
    const server = createServer((c) => {
      const u = tcpConnect(port, '127.0.0.1');
      c.pipe(u);
      u.pipe(c);
      c.on('error', () => u.destroy());
      u.on('error', () => c.destroy());
    });
    bridges.push(server);
    await new Promise<void>((r) => server.listen(sock, r));
    return sock;
  }

  /** Makes localhost:port inside the namespace reach the bridge's socket. */
  async function forward(ns: string, port: number, sock: string): Promise<void> {
    const fwd = new NsProcess(ns, ['-e', FORWARDER, String(port), sock]);
    procs.push(fwd);
    await fwd.waitFor(/forwarding/);
  }

  async function nsAgent(ns: string, name: string, ceiling: string): Promise<NsProcess> {
    const stateDir = tempDir(`wake-${name}`);
    const ceilingPath = join(stateDir, 'ceiling.toml');
    const env = { LETKITE_CEILING: ceilingPath };
    const join_ = new NsProcess(
      ns,
      ['--import', 'tsx', cliMain, 'agent', 'join', gw.url, '-', '--name', name, '--state-dir', stateDir, ...RUN_AS],
      env,
      await gw.joinToken(),
    );
    const code = await join_.exited;
    if (code !== 0) throw new Error(`agent join in ${ns} failed: ${join_.out}`);
    rmSync(ceilingPath, { force: true });
    writeFileSync(ceilingPath, ceiling, { mode: 0o644 });
    const run = new NsProcess(ns, ['--import', 'tsx', cliMain, 'agent', 'run', '--state-dir', stateDir], env);
    procs.push(run);
    agents.set(name, { proc: run, stateDir });
    await run.waitFor(/connected to/);
    return run;
  }

  async function machines() {
    const r = await callTool<{ machines: { id: string; name: string; online: boolean; ceiling: unknown }[] }>(
      client,
      'machines_list',
      {},
    );
    return r.data.machines;
  }

  const packets = () =>
    [...listener.out.matchAll(/^packet (\S+) ([0-9a-f]+)$/gm)].map((m) => ({ from: m[1], hex: m[2] }));

  beforeAll(async () => {
    dir = tempDir('wake');
    gw = await TestGateway.start();
    client = await mcpClient(gw.url, await gw.apiToken());
    // The bridge from the namespaces to the gateway.
    const sock = await bridgeTo(gw.port, 'gw');
    ip('netns', 'add', nsA);
    ip('netns', 'add', nsB);
    ip('link', 'add', vethA, 'netns', nsA, 'type', 'veth', 'peer', 'name', vethB, 'netns', nsB);
    ip('-n', nsB, 'link', 'set', vethB, 'address', macB);
    for (const [ns, dev, host] of [
      [nsA, vethA, 1],
      [nsB, vethB, 2],
    ] as const) {
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('-n', ns, 'addr', 'add', `${subnet}.${host}/24`, 'brd', '+', 'dev', dev);
      ip('-n', ns, 'link', 'set', dev, 'up');
      await forward(ns, gw.port, sock);
    }
    listener = new NsProcess(nsB, ['-e', LISTENER]);
    procs.push(listener);
    await listener.waitFor(/listening/);

    // The sleeper reports its MAC and subnet once, then "sleeps".
    const sleeper = await nsAgent(nsB, 'sleeper', `${FULL_SHELL_CEILING}wake = false\n`);
    await sleeper.stop();
    await nsAgent(nsA, 'sender', `${FULL_SHELL_CEILING}wake = true\n`);
    await nsAgent(nsA, 'nowake', `${FULL_SHELL_CEILING}wake = false\n`);
    // On the host's network only: sorts first by name, shares no subnet with the sleeper.
    hostAgents.push(await gw.addAgent('aaa-host', { ceiling: `${FULL_SHELL_CEILING}wake = true\n` }));
    await waitFor('every ceiling reported, the sleeper offline', async () => {
      const ms = await machines();
      const by = (n: string) => ms.find((m) => m.name === n);
      return (
        by('sleeper')?.online === false &&
        ['sender', 'nowake', 'aaa-host'].every((n) => by(n)?.online && by(n)?.ceiling !== null)
      );
    });
  }, 240_000);

  afterAll(async () => {
    await client?.close();
    for (const a of hostAgents) await a.dispose();
    for (const p of procs.reverse()) await p.stop();
    await gw?.dispose();
    for (const b of bridges) b.close();
    spawnSync('ip', ['netns', 'del', nsA]);
    spawnSync('ip', ['netns', 'del', nsB]);
    for (const { stateDir } of agents.values()) removeDir(stateDir);
    if (dir) removeDir(dir);
  });

  test("wake_device: the agent sends the exact magic packet to its network's broadcast address", async () => {
    const r = await callTool<{ via_machine: string; mac: string; sent: { interface: string; broadcast: string }[] }>(
      client,
      'wake_device',
      { via_machine: 'sender', mac: '02-AA-BB-CC-DD-EE' },
    );
    expect(r.error).toBeUndefined();
    expect(r.data).toMatchObject({
      mac: '02:aa:bb:cc:dd:ee',
      sent: [{ interface: vethA, broadcast: `${subnet}.255`, port: 9 }],
    });
    const got = await waitFor('the packet in namespace B', () =>
      packets().find((p) => p.hex === magicHex('02aabbccddee')),
    );
    expect(got.from).toBe(`${subnet}.1`);
    expect(got.hex).toHaveLength(2 * 102);
  });

  test('a sender whose ceiling says wake = false refuses, and no packet arrives', async () => {
    const before = packets().length;
    const r = await callTool(client, 'wake_device', { via_machine: 'nowake', mac: '02:aa:bb:cc:dd:01' });
    expect(r.error?.code).toBe('blocked_by_ceiling');
    expect(r.error?.details).toMatchObject({ layer: 'ceiling', key: 'wake' });
    await new Promise((res) => setTimeout(res, 1500));
    expect(packets().length).toBe(before);
  });

  test('a compromised gateway cannot make an agent whose ceiling says wake = false send anything', async () => {
    // The rogue holds the pinned identity key and claims a wide policy with a human approval: only the ceiling
    // can refuse, and it must do so on the machine itself.
    const rogue = await RogueGateway.start();
    const stateDir = tempDir('wake-rogue');
    const ceilingPath = join(stateDir, 'ceiling.toml');
    try {
      const port = Number(new URL(rogue.url).port);
      await forward(nsA, port, await bridgeTo(port, 'rogue'));
      writeFileSync(join(stateDir, 'agent.json'), JSON.stringify(rogue.agentState('mch_rogue_wake')), { mode: 0o600 });
      writeFileSync(ceilingPath, `${FULL_SHELL_CEILING}wake = false\n`, { mode: 0o644 });
      const agent = new NsProcess(nsA, [
        '--import',
        'tsx',
        cliMain,
        'agent',
        'run',
        '--state-dir',
        stateDir,
        '--ceiling',
        ceilingPath,
      ]);
      procs.push(agent);
      await rogue.connected();
      const mac = '02:de:ad:be:ef:01';
      const context = { policy: 'full', approved: true, confirm: true, actor: 'mallory' };
      const refused = await rogue.request('wake_send', { tool: 'wake_device', mac }, context);
      expect(refused.error?.code).toBe('blocked_by_ceiling');
      await new Promise((res) => setTimeout(res, 1500));
      expect(packets().some((p) => p.hex === magicHex(mac.replace(/:/g, '')))).toBe(false);

      // The same request once the machine's administrator allows wake: the refusal was the ceiling's.
      const reports = rogue.reports.length;
      writeFileSync(`${ceilingPath}.new`, `${FULL_SHELL_CEILING}wake = true\n`, { mode: 0o644 });
      renameSync(`${ceilingPath}.new`, ceilingPath);
      await waitFor('the new ceiling reported', () => rogue.reports.length > reports);
      const sent = await rogue.request('wake_send', { tool: 'wake_device', mac }, context);
      expect(sent.ok).toBe(true);
      await waitFor('the packet once allowed', () => packets().some((p) => p.hex === magicHex(mac.replace(/:/g, ''))));
      await agent.stop();
    } finally {
      await rogue.close();
      removeDir(stateDir);
    }
  });

  test("wake_node picks the online machine on the sleeper's subnet whose ceiling allows wake, with the sleeper's MAC", async () => {
    const ms = await machines();
    const sender = ms.find((m) => m.name === 'sender');
    const r = await callTool<{ machine: string; via_machine: string; mac: string }>(client, 'wake_node', {
      machine: 'sleeper',
    });
    expect(r.error).toBeUndefined();
    expect(r.data).toMatchObject({ via_machine: sender?.id, mac: macB });
    await waitFor("the sleeper's magic packet", () =>
      packets().find((p) => p.hex === magicHex(macB.replace(/:/g, ''))),
    );
  });

  test('wake_node of a machine that is online is a conflict', async () => {
    const r = await callTool(client, 'wake_node', { machine: 'sender' });
    expect(r.error?.code).toBe('conflict');
  });

  test('wake_node refuses with a clear code when no machine on the subnet may send, or none is online', async () => {
    await agents.get('sender')?.proc.stop();
    await waitFor('sender offline', async () => (await machines()).find((m) => m.name === 'sender')?.online === false);
    const blocked = await callTool(client, 'wake_node', { machine: 'sleeper' });
    expect(blocked.error?.code).toBe('blocked_by_ceiling');
    await agents.get('nowake')?.proc.stop();
    await waitFor('nowake offline', async () => (await machines()).find((m) => m.name === 'nowake')?.online === false);
    const none = await callTool(client, 'wake_node', { machine: 'sleeper' });
    expect(none.error?.code).toBe('machine_offline');
    expect(none.error?.details).toMatchObject({ reason: 'no_agent_on_network', subnets: [`${subnet}.2/24`] });
  });
});
