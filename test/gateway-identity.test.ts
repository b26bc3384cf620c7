import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, randomBytes, sign, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { gatewayKeyFingerprint } from '@letkite/agent';
import { agentAuthText, PROTOCOL_VERSION } from '@letkite/protocol';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import {
  callTool,
  FULL_SHELL_CEILING,
  machineOnline,
  mcpClient,
  RUN_AS,
  type TestAgent,
  TestGateway,
} from './support/letkite';
import { CliProcess, freePort, removeDir, runCliCommand, tempDir, waitFor } from './support/processes';
import { RogueGateway } from './support/rogue-gateway';

interface ExecOut {
  exit_code: number;
  stdout: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A command that leaves a file behind if it ever runs. */
const touch = (marker: string) => ({
  op: 'exec',
  params: { command: `touch ${marker}`, timeout_ms: 5000, max_output_bytes: 1000 },
  context: { policy: 'full', confirm: true },
});

/**
 * Connects to the real gateway AS the enrolled agent (its own key from its state file) and records the challenge
 * and the welcome: what an eavesdropper on plain ws:// could capture and replay later.
 */
async function recordHandshake(gatewayUrl: string, stateDir: string): Promise<{ nonce: string; welcome: unknown }> {
  const state = JSON.parse(readFileSync(join(stateDir, 'agent.json'), 'utf8')) as {
    machine_id: string;
    private_key_pem: string;
  };
  const key = createPrivateKey(state.private_key_pem);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${gatewayUrl.replace('http', 'ws')}/agent/v1`);
    let nonce = '';
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; nonce?: string };
      if (frame.type === 'challenge' && frame.nonce) {
        nonce = frame.nonce;
        const agentNonce = randomBytes(32).toString('base64url');
        const text = agentAuthText({
          protocol: PROTOCOL_VERSION,
          machineId: state.machine_id,
          gatewayNonce: nonce,
          agentNonce,
        });
        ws.send(
          JSON.stringify({
            type: 'auth',
            machine_id: state.machine_id,
            nonce: agentNonce,
            signature: sign(null, Buffer.from(text), key).toString('base64'),
            info: { hostname: 'recorder', os: 'linux', arch: 'x64', version: 'test', protocol: PROTOCOL_VERSION },
          }),
        );
      } else if (frame.type === 'welcome') {
        ws.close();
        resolve({ nonce, welcome: frame });
      } else reject(new Error(`unexpected ${data.toString()}`));
    });
    ws.on('error', reject);
  });
}

describe('the agent obeys only the gateway it joined', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let token: string;
  let client: Client | null = null;
  const work = tempDir('gw-identity');
  /** A handshake of the real gateway, recorded before the impostor tests. */
  let recorded: { nonce: string; welcome: unknown } | null = null;

  beforeAll(async () => {
    gw = await TestGateway.start();
    token = await gw.apiToken();
    agent = await gw.addAgent('pinned');
    client = await mcpClient(gw.url, token);
    await machineOnline(client, 'pinned');
  });

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
    removeDir(work);
  });

  test('enrollment pinned the gateway identity key in the agent state (0600)', () => {
    const file = join(agent.stateDir, 'agent.json');
    const state = JSON.parse(readFileSync(file, 'utf8')) as { gateway_public_key?: string };
    expect(state.gateway_public_key).toMatch(/^[A-Za-z0-9+/=]{40,}$/);
    // The fingerprint `agent join` prints is the one the gateway logs at start-up.
    const logged = (gw.process?.stdout ?? '') + (gw.process?.stderr ?? '');
    expect(logged).toContain(`gateway identity ${gatewayKeyFingerprint(state.gateway_public_key ?? '')}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(gw.dataDir, 'gateway-identity.pem')).mode & 0o777).toBe(0o600);
  });

  test('an agent speaking protocol 1 (no nonce, no proof check) is told which protocol the gateway speaks', async () => {
    const got = await new Promise<{ code: number; error: string }>((resolve, reject) => {
      const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/agent/v1`);
      let error = '';
      ws.on('message', (data) => {
        const f = JSON.parse(data.toString()) as { type: string; error?: { message: string } };
        if (f.type === 'challenge') {
          ws.send(
            JSON.stringify({
              type: 'auth',
              machine_id: 'mch_old',
              signature: Buffer.alloc(64).toString('base64'),
              info: { hostname: 'old', os: 'linux', arch: 'x64', version: '0.0.1', protocol: 1 },
            }),
          );
        } else if (f.type === 'error') error = f.error?.message ?? '';
      });
      ws.on('close', (code) => resolve({ code, error }));
      ws.on('error', reject);
    });
    expect(got.code).toBe(4400);
    expect(got.error).toMatch(new RegExp(`protocol 1 is not supported \\(gateway speaks ${PROTOCOL_VERSION}\\)`));
  });

  test('an impostor bound on the gateway port while the gateway is down gets nothing run', async () => {
    // Recorded while the real gateway is up: used by the replay test below.
    recorded = await recordHandshake(gw.url, agent.stateDir);
    await client?.close();
    client = null;
    await gw.stop();
    const marker = join(work, 'impostor-marker');
    const rogue = await RogueGateway.start({ impostor: true, port: gw.port, requestAfterWelcome: touch(marker) });
    try {
      await waitFor('two refused handshakes', () => rogue.auths.length >= 2, 20_000);
      await rogue.welcomed();
      expect(await rogue.request('exec', touch(marker).params, touch(marker).context)).toMatchObject({
        ok: false,
        error: { code: 'closed' },
      });
      await sleep(300);
      expect(existsSync(marker)).toBe(false);
      expect(rogue.reports).toEqual([]);
      expect(rogue.earlyAnswers.every((a) => a.error?.code === 'closed')).toBe(true);
      expect(rogue.closes).toContain(4401);
      await agent.process?.waitForOutput(/failed to prove the identity pinned at join/);
    } finally {
      await rogue.close();
    }
  });

  test('a welcome replayed from an earlier connection of the real gateway is refused', async () => {
    expect(recorded).not.toBeNull();
    const marker = join(work, 'replay-marker');
    // Same challenge nonce as the real gateway sent, and its genuine proof: only the agent's fresh nonce differs.
    const rogue = await RogueGateway.start({
      impostor: true,
      port: gw.port,
      challengeNonce: recorded?.nonce ?? '',
      welcome: recorded?.welcome,
      requestAfterWelcome: touch(marker),
    });
    const before = (agent.process?.stderr ?? '').split('failed to prove').length;
    try {
      await rogue.welcomed();
      await waitFor('the refusal in the agent log', () =>
        (agent.process?.stderr ?? '').split('failed to prove').length > before ? true : null,
      );
      await sleep(300);
      expect(existsSync(marker)).toBe(false);
      expect(rogue.reports).toEqual([]);
      expect(rogue.closes).toContain(4401);
    } finally {
      await rogue.close();
    }
  });

  test('a request sent before the handshake is not run, even by a gateway holding the pinned key', async () => {
    const marker = join(work, 'early-marker');
    const rogue = await RogueGateway.start({ requestBeforeHandshake: touch(marker) });
    const stateDir = tempDir('early-agent');
    writeFileSync(join(stateDir, 'agent.json'), JSON.stringify(rogue.agentState()), { mode: 0o600 });
    writeFileSync(join(stateDir, 'ceiling.toml'), FULL_SHELL_CEILING, { mode: 0o644 });
    const early = new CliProcess([
      'agent',
      'run',
      '--state-dir',
      stateDir,
      '--ceiling',
      join(stateDir, 'ceiling.toml'),
    ]);
    try {
      await early.waitForOutput(/refused a request frame .* before the gateway proved its identity/);
      await waitFor('the socket closed', () => rogue.closes.includes(1008));
      await sleep(300);
      expect(existsSync(marker)).toBe(false);
      expect(rogue.reports).toEqual([]);
    } finally {
      await early.stop();
      await rogue.close();
      removeDir(stateDir);
    }
    // Control: the same request after a correct handshake does run (the ceiling allows it), so the marker works.
    const honest = await RogueGateway.start();
    const dir2 = tempDir('early-agent-control');
    writeFileSync(join(dir2, 'agent.json'), JSON.stringify(honest.agentState()), { mode: 0o600 });
    writeFileSync(join(dir2, 'ceiling.toml'), FULL_SHELL_CEILING, { mode: 0o644 });
    const control = new CliProcess(['agent', 'run', '--state-dir', dir2, '--ceiling', join(dir2, 'ceiling.toml')]);
    try {
      await honest.connected();
      const r = await honest.request('exec', touch(marker).params, touch(marker).context);
      expect(r.ok).toBe(true);
      expect(existsSync(marker)).toBe(true);
    } finally {
      await control.stop();
      await honest.close();
      removeDir(dir2);
    }
  });

  test('a listener that never proves itself is dropped and the agent tries again', async () => {
    const rogue = await RogueGateway.start({ impostor: true, stall: true });
    const dir = tempDir('stalled-agent');
    writeFileSync(join(dir, 'agent.json'), JSON.stringify(rogue.agentState()), { mode: 0o600 });
    const stalled = new CliProcess(['agent', 'run', '--state-dir', dir, '--ceiling', join(dir, 'none.toml')]);
    try {
      await waitFor('a second attempt after the stalled one', () => rogue.auths.length >= 2, 40_000);
      await stalled.waitForOutput(/did not prove its identity in time/);
      expect(rogue.reports).toEqual([]);
    } finally {
      await stalled.stop();
      await rogue.close();
      removeDir(dir);
    }
  });

  test('the real gateway restarted on the same port is trusted again and calls work', async () => {
    await gw.restart();
    client = await mcpClient(gw.url, token);
    await waitFor(
      'the agent back on the real gateway',
      async () => {
        const r = await callTool<{ machines: { name: string; online: boolean }[] }>(
          client as Client,
          'machines_list',
          {},
        );
        return r.data.machines.some((m) => m.name === 'pinned' && m.online);
      },
      60_000,
    );
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'pinned', command: 'echo trusted again' });
    expect(r.data.stdout).toBe('trusted again\n');
  });

  test('an agent state without a pinned gateway key refuses to connect and says how to re-join', async () => {
    const dir = tempDir('unpinned');
    try {
      const state = JSON.parse(readFileSync(join(agent.stateDir, 'agent.json'), 'utf8')) as Record<string, unknown>;
      delete state.gateway_public_key;
      writeFileSync(join(dir, 'agent.json'), JSON.stringify(state), { mode: 0o600 });
      const r = await runCliCommand(['agent', 'run', '--state-dir', dir, '--ceiling', join(dir, 'none.toml')]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/no pinned gateway identity/);
      expect(r.stderr).toMatch(/letkite agent join/);
    } finally {
      removeDir(dir);
    }
  });
});

describe("npm start's local agent", () => {
  test('is pinned at enrollment, and a state from before pinning is re-pinned by the gateway itself', async () => {
    const data = tempDir('start-pin');
    const port = String(await freePort());
    const stateFile = join(data, 'agent', 'agent.json');
    try {
      const first = new CliProcess(['start', '--data', data, '--port', port]);
      try {
        await first.waitForOutput(/\[agent\] connected to/, 60_000);
      } finally {
        await first.stop();
      }
      const state = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
      expect(state.gateway_public_key).toEqual(expect.any(String));
      delete state.gateway_public_key;
      writeFileSync(stateFile, JSON.stringify(state), { mode: 0o600 });
      const second = new CliProcess(['start', '--data', data, '--port', port]);
      try {
        await second.waitForOutput(/\[agent\] connected to/, 60_000);
      } finally {
        await second.stop();
      }
      expect(JSON.parse(readFileSync(stateFile, 'utf8')).gateway_public_key).toBeTruthy();
    } finally {
      removeDir(data);
    }
  });
});

describe('the gateway identity key', () => {
  test('two gateways started at once on one data dir keep one identity, and a restart keeps it', async () => {
    const dataDir = tempDir('gw-twice');
    const start = async () =>
      new CliProcess(['gateway'], { LETKITE_DATA: dataDir, LETKITE_PORT: String(await freePort()) });
    const [a, b] = await Promise.all([start(), start()]);
    try {
      const [ma, mb] = await Promise.all([
        a.waitForOutput(/gateway identity (SHA256:\S+)/).catch((e) => {
          throw new Error(`${e} ${a.stderr} ${b.stderr}`);
        }),
        b.waitForOutput(/gateway identity (SHA256:\S+)/),
      ]);
      expect(ma[1]).toBe(mb[1]);
      expect(statSync(join(dataDir, 'gateway-identity.pem')).mode & 0o777).toBe(0o600);
      await Promise.all([a.stop(), b.stop()]);
      const c = await start();
      try {
        const mc = await c.waitForOutput(/gateway identity (SHA256:\S+)/);
        expect(mc[1]).toBe(ma[1]);
      } finally {
        await c.stop();
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      removeDir(dataDir);
    }
  });
});

/** A self-signed certificate for localhost (its own CA), made by openssl. */
function selfSignedLocalhost(dir: string, name: string): { key: string; cert: string; pin: string } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.crt`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=localhost ${name}`,
      '-addext',
      'subjectAltName=DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  const pem = readFileSync(cert, 'utf8');
  const spki = new X509Certificate(pem).publicKey.export({ format: 'der', type: 'spki' });
  return { key: readFileSync(key, 'utf8'), cert: pem, pin: createHash('sha256').update(spki).digest('base64') };
}

describe('over TLS the agent also pins the certificate it saw at join', () => {
  test('another certificate, even one the agent trusts, is refused; the pinned one is accepted again', async () => {
    const dir = tempDir('tls-pin');
    const gw = await TestGateway.start();
    const token = await gw.apiToken();
    const first = selfSignedLocalhost(dir, 'first');
    const second = selfSignedLocalhost(dir, 'second');
    const untrusted = selfSignedLocalhost(dir, 'untrusted');
    // Both first and second are trusted roots for the agent: only the pin tells them apart.
    writeFileSync(join(dir, 'trusted.pem'), first.cert + second.cert);
    const sockets = new Set<Socket>();
    const proxy = createTlsServer({ key: first.key, cert: first.cert }, (tlsSocket) => {
      const upstream = connect(gw.port, '127.0.0.1');
      sockets.add(tlsSocket);
      tlsSocket.on('close', () => sockets.delete(tlsSocket));
      tlsSocket.pipe(upstream).pipe(tlsSocket);
      upstream.on('error', () => tlsSocket.destroy());
      tlsSocket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const port = (proxy.address() as { port: number }).port;
    const swap = (c: { key: string; cert: string }) => {
      proxy.setSecureContext({ key: c.key, cert: c.cert });
      for (const s of sockets) s.destroy();
    };
    const env = { NODE_EXTRA_CA_CERTS: join(dir, 'trusted.pem') };
    const stateDir = join(dir, 'agent');
    let agent: CliProcess | null = null;
    let client: Client | null = null;
    try {
      const join1 = await runCliCommand(
        // --ceiling: without it a root join writes the default ceiling to the host's /etc/letkite.
        [
          'agent',
          'join',
          `https://localhost:${port}`,
          '-',
          '--name',
          'tlsbox',
          '--state-dir',
          stateDir,
          '--ceiling',
          join(stateDir, 'ceiling.toml'),
          ...RUN_AS,
        ],
        env,
        await gw.joinToken(),
      );
      expect(join1.code, join1.stderr).toBe(0);
      const state = JSON.parse(readFileSync(join(stateDir, 'agent.json'), 'utf8')) as { gateway_tls_pin?: string };
      expect(state.gateway_tls_pin).toBe(first.pin);
      writeFileSync(join(stateDir, 'ceiling.toml'), FULL_SHELL_CEILING, { mode: 0o644 });
      agent = new CliProcess(
        ['agent', 'run', '--state-dir', stateDir, '--ceiling', join(stateDir, 'ceiling.toml')],
        env,
      );
      await agent.waitForOutput(/connected to/);
      client = await mcpClient(gw.url, token);
      await machineOnline(client, 'tlsbox');

      swap(second);
      await agent.waitForOutput(/TLS certificate of .* is not the one pinned at join/);
      await machineOnline(client, 'tlsbox', false);
      const r = await callTool(client, 'exec', { machine: 'tlsbox', command: 'true' });
      expect(r.error?.code).toBe('machine_offline');

      // The chain is still validated as usual: an untrusted certificate fails before the pin is even looked at.
      swap(untrusted);
      await agent.waitForOutput(/self[- ]signed certificate/);
      await machineOnline(client, 'tlsbox', false);

      swap(first);
      await waitFor(
        'the agent back behind the pinned certificate',
        async () => {
          const m = await callTool<{ machines: { name: string; online: boolean }[] }>(
            client as Client,
            'machines_list',
            {},
          );
          return m.data.machines.some((x) => x.name === 'tlsbox' && x.online);
        },
        60_000,
      );
      const ok = await callTool<ExecOut>(client, 'exec', { machine: 'tlsbox', command: 'echo pinned' });
      expect(ok.data.stdout).toBe('pinned\n');
    } finally {
      await client?.close();
      await agent?.stop();
      for (const s of sockets) s.destroy();
      proxy.close();
      await gw.dispose();
      removeDir(dir);
    }
  });
});
