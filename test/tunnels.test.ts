import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, get as httpGet, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { encodeDataFrame } from '@letkite/protocol';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { asPerson, TestAccount, type TestPerson, totpCode } from './support/approvals';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { CliProcess, freePort, removeDir, tempDir, waitFor } from './support/processes';
import { RogueGateway } from './support/rogue-gateway';

interface TunnelOut {
  tunnel_id: string;
  target: string;
  kind: 'http' | 'tcp';
  expires_at: string;
  url?: string;
  tcp?: { host: string; port: number };
}

/** An HTTP server on "the machine" that answers with what it received (method, path, headers, body). */
async function echoHttpServer(): Promise<Server> {
  const server = createHttpServer((req: IncomingMessage, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('set-cookie', ['app=2; Path=/', 'letkite_session=stolen; Path=/']);
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(parts).toString(),
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

/** A TCP echo server; `connections` counts who reached it. */
async function echoTcpServer(): Promise<{
  server: ReturnType<typeof createServer>;
  port: number;
  connections: () => number;
}> {
  let n = 0;
  const server = createServer((s) => {
    n += 1;
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, connections: () => n };
}

function portOf(server: Server | ReturnType<typeof createServer>): number {
  return (server.address() as AddressInfo).port;
}

/** Connects to a tcp tunnel, sends `text`, and reads until that many bytes came back. */
async function echoThrough(port: number, text: string): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  const got: Buffer[] = [];
  let size = 0;
  return await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no echo')), 15_000);
    socket.on('data', (d: Buffer) => {
      got.push(d);
      size += d.length;
      if (size >= Buffer.byteLength(text)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(Buffer.concat(got).toString());
      }
    });
    socket.on('close', () => reject(new Error('closed before the echo')));
    socket.write(text);
  });
}

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) resolve();
    socket.once('close', () => resolve());
  });
}

/** Opens a socket through a tcp tunnel and waits until a round trip went through it. */
async function liveConnection(port: number): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no echo')), 15_000);
    socket.once('data', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.write('ping');
  });
  return socket;
}

/** The reasons of the account's tunnel.close audit rows for one tunnel. */
function closeReasons(account: TestAccount, tunnelId: string): string[] {
  const rows = account.store.sqlite
    .prepare("SELECT details FROM audit_events WHERE action = 'tunnel.close' ORDER BY id")
    .all() as { details: string }[];
  return rows
    .map((r) => JSON.parse(r.details) as { tunnel_id?: string; reason?: string })
    .filter((d) => d.tunnel_id === tunnelId)
    .map((d) => d.reason ?? '');
}

function memoryOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? Number.NaN) * 1024;
}

describe('tunnels through a real gateway and agent', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let account: TestAccount;
  let owner: TestPerson;
  let token: { id: string; token: string };
  let client: Client;
  let web: Server;
  let echo: Awaited<ReturnType<typeof echoTcpServer>>;
  let unlisted: Awaited<ReturnType<typeof echoTcpServer>>;
  let blaster: Server | ReturnType<typeof createServer>;

  const policy = (targets: string[]) => ({
    name: 'tunnels',
    shell: 'off',
    tunnel_targets: targets,
  });

  beforeAll(async () => {
    web = await echoHttpServer();
    echo = await echoTcpServer();
    unlisted = await echoTcpServer();
    // Sends 96 MiB as fast as the tunnel takes it, to a reader that reads slowly.
    blaster = createServer((s) => {
      s.on('error', () => undefined);
      const chunk = Buffer.alloc(1024 * 1024, 7);
      let left = 96;
      const more = () => {
        while (left > 0) {
          left -= 1;
          if (!s.write(chunk)) {
            s.once('drain', more);
            return;
          }
        }
        s.end();
      };
      more();
    });
    await new Promise<void>((r) => blaster.listen(0, '127.0.0.1', r));
    gw = await TestGateway.start();
    // The machine allows loopback only; the policy lists the servers' ports and the 10/8 network.
    agent = await gw.addAgent('alpha', { ceiling: `${FULL_SHELL_CEILING}tunnel_targets = ["127.0.0.1:*"]\n` });
    account = await TestAccount.open(gw);
    owner = await account.person('Olga', 'owner');
    token = await account.token(
      owner.userId,
      policy([`127.0.0.1:${portOf(web)}`, `127.0.0.1:${echo.port}`, `127.0.0.1:${portOf(blaster)}`, '10.0.0.0/8:*']),
    );
    client = await mcpClient(gw.url, token.token);
    await machineOnline(client, 'alpha');
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await account?.close();
    await agent?.dispose();
    await gw?.dispose();
    web?.close();
    echo?.server.close();
    unlisted?.server.close();
    blaster?.close();
  });

  test('an http tunnel serves the machine’s web service to the bearer and to a signed-in person, credentials stripped', async () => {
    const r = await callTool<TunnelOut>(client, 'tunnel_open', {
      machine: 'alpha',
      target: `127.0.0.1:${portOf(web)}`,
      kind: 'http',
    });
    expect(r.error).toBeUndefined();
    expect(r.data.url).toBe(`${gw.url}/t/${r.data.tunnel_id}/`);
    const url = r.data.url as string;

    const byBearer = await fetch(`${url}api/items?x=1`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.token}`, 'content-type': 'text/plain' },
      body: 'hello through the tunnel',
    });
    expect(byBearer.status).toBe(200);
    const seen = (await byBearer.json()) as {
      method: string;
      url: string;
      headers: Record<string, string>;
      body: string;
    };
    expect(seen).toMatchObject({ method: 'POST', url: '/api/items?x=1', body: 'hello through the tunnel' });
    expect(seen.headers.host).toBe(`127.0.0.1:${portOf(web)}`);
    expect(seen.headers.authorization).toBeUndefined();
    // The target cannot set the gateway's session cookie, and the page runs sandboxed.
    expect(byBearer.headers.getSetCookie()).toEqual(['app=2; Path=/']);
    expect(byBearer.headers.get('content-security-policy')).toContain('sandbox');

    const byCookie = await fetch(`${url}page`, { headers: { cookie: `${owner.cookie}; app=1` } });
    expect(byCookie.status).toBe(200);
    const seenByCookie = (await byCookie.json()) as { headers: Record<string, string> };
    expect(seenByCookie.headers.cookie).toBe('app=1');
    expect(JSON.stringify(seenByCookie)).not.toContain(owner.cookie.split('=')[1] as string);

    // Nobody else: no credential, or another token of the same account.
    expect((await fetch(url)).status).toBe(401);
    const other = await account.token(owner.userId, policy([`127.0.0.1:${portOf(web)}`]));
    expect((await fetch(url, { headers: { authorization: `Bearer ${other.token}` } })).status).toBe(404);
    // A member who may not see machines does not see the tunnel either.
    const blind = await account.person('Bo', 'member', { permissions: ['clients.connect'] });
    expect((await fetch(url, { headers: { cookie: blind.cookie } })).status).toBe(404);
    const viewer = await account.person('Vi', 'member', { permissions: ['machines.view'] });
    expect((await fetch(url, { headers: { cookie: viewer.cookie } })).status).toBe(200);
    // A cookie-authenticated change from another site is refused (CSRF).
    const crossSite = await fetch(`${url}x`, {
      method: 'POST',
      headers: { cookie: owner.cookie, origin: 'https://evil.example' },
      body: 'x',
    });
    expect(crossSite.status).toBe(403);

    const list = await callTool<{ tunnels: TunnelOut[] }>(client, 'tunnels_list', {});
    expect(list.data.tunnels.map((t) => t.tunnel_id)).toContain(r.data.tunnel_id);
    const shut = await callTool(client, 'tunnel_close', { tunnel_id: r.data.tunnel_id });
    expect(shut.error).toBeUndefined();
    expect((await fetch(url, { headers: { authorization: `Bearer ${token.token}` } })).status).toBe(404);
    expect(closeReasons(account, r.data.tunnel_id)).toEqual(['closed']);
  });

  test('a tcp tunnel forwards connections from the gateway’s port to the machine’s echo server', async () => {
    const r = await callTool<TunnelOut>(client, 'tunnel_open', {
      machine: 'alpha',
      target: `127.0.0.1:${echo.port}`,
      kind: 'tcp',
    });
    expect(r.error).toBeUndefined();
    expect(r.data.tcp?.host).toBe('127.0.0.1');
    const port = r.data.tcp?.port as number;
    expect(await echoThrough(port, 'hello tcp')).toBe('hello tcp');
    const [a, b] = await Promise.all([echoThrough(port, 'one'.repeat(1000)), echoThrough(port, 'two'.repeat(50_000))]);
    expect(a).toBe('one'.repeat(1000));
    expect(b).toBe('two'.repeat(50_000));
    await callTool(client, 'tunnel_close', { tunnel_id: r.data.tunnel_id });
  });

  test('a target that greets and hangs up at once still gets its greeting to the client', async () => {
    const greeter = createServer((sock) => sock.end('hello and goodbye\n'));
    await new Promise<void>((r) => greeter.listen(0, '127.0.0.1', r));
    const mine = await account.token(owner.userId, policy([`127.0.0.1:${portOf(greeter)}`]));
    const ai = await mcpClient(gw.url, mine.token);
    try {
      const r = await callTool<TunnelOut>(ai, 'tunnel_open', {
        machine: 'alpha',
        target: `127.0.0.1:${portOf(greeter)}`,
        kind: 'tcp',
      });
      expect(r.error).toBeUndefined();
      for (let i = 0; i < 5; i += 1) {
        const socket = connect({ host: '127.0.0.1', port: r.data.tcp?.port as number });
        const got: Buffer[] = [];
        socket.on('data', (d: Buffer) => got.push(d));
        await closed(socket);
        expect(Buffer.concat(got).toString()).toBe('hello and goodbye\n');
      }
    } finally {
      await ai.close();
      greeter.close();
    }
  });

  test('targets outside the policy or the ceiling are refused, naming the layer', async () => {
    const outsidePolicy = await callTool(client, 'tunnel_open', {
      machine: 'alpha',
      target: `127.0.0.1:${unlisted.port}`,
      kind: 'tcp',
    });
    expect(outsidePolicy.error?.code).toBe('blocked_by_policy');
    // The policy allows 10/8, the machine's ceiling only loopback.
    const outsideCeiling = await callTool(client, 'tunnel_open', {
      machine: 'alpha',
      target: '10.1.2.3:80',
      kind: 'tcp',
    });
    expect(outsideCeiling.error?.code).toBe('blocked_by_ceiling');
    expect(unlisted.connections()).toBe(0);
  });

  test('a name that resolves to an address the policy does not list is refused by the agent', async () => {
    // Only 10.0.0.0/8 (and some loopback ports) are listed: "localhost" may resolve into 10/8 as far as the gateway
    // knows, so it opens; the agent resolves it to loopback and refuses the connection.
    const only10 = await account.token(owner.userId, policy(['10.0.0.0/8:*']));
    const ai = await mcpClient(gw.url, only10.token);
    try {
      const r = await callTool<TunnelOut>(ai, 'tunnel_open', {
        machine: 'alpha',
        target: `localhost:${unlisted.port}`,
        kind: 'http',
      });
      expect(r.error).toBeUndefined();
      const res = await fetch(r.data.url as string, { headers: { authorization: `Bearer ${only10.token}` } });
      const body = (await res.json()) as { error: { code: string; details: { layer: string } } };
      expect(res.status).toBe(403);
      expect(body.error.code).toBe('blocked_by_policy');
      expect(body.error.details.layer).toBe('policy');
      expect(unlisted.connections()).toBe(0);
    } finally {
      await ai.close();
    }
  });

  test('a policy that lists tunnel_open under approval.tools makes it wait for a human', async () => {
    const gated = await account.token(owner.userId, {
      ...policy([`127.0.0.1:${echo.port}`]),
      approval: { tools: ['tunnel_open'], approvers: 'any_admin', timeout: '10m' },
    });
    const ai = await mcpClient(gw.url, gated.token);
    try {
      const before = await callTool<{ tunnels: TunnelOut[] }>(ai, 'tunnels_list', {});
      const r = await callTool<{ status: string; approval_id: string }>(ai, 'tunnel_open', {
        machine: 'alpha',
        target: `127.0.0.1:${echo.port}`,
        kind: 'tcp',
      });
      expect(r.error).toBeUndefined();
      expect(r.data.status).toBe('pending_approval');
      expect(r.data.approval_id).toBeTruthy();
      const list = await callTool<{ tunnels: TunnelOut[] }>(ai, 'tunnels_list', {});
      expect(list.data.tunnels.length).toBe(before.data.tunnels.length);
      // Approved (TOTP), the same call opens the tunnel.
      const decided = await asPerson(gw, owner, 'POST', `/api/approvals/${r.data.approval_id}/approve`, {
        method: 'totp',
        code: await totpCode(owner),
      });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      const again = await callTool<TunnelOut>(ai, 'tunnel_open', {
        machine: 'alpha',
        target: `127.0.0.1:${echo.port}`,
        kind: 'tcp',
      });
      expect(again.error).toBeUndefined();
      expect(await echoThrough(again.data.tcp?.port as number, 'approved')).toBe('approved');
      await callTool(ai, 'tunnel_close', { tunnel_id: again.data.tunnel_id });
    } finally {
      await ai.close();
    }
  });

  test('a live tunnel closes at its expiry', async () => {
    const r = await callTool<TunnelOut>(client, 'tunnel_open', {
      machine: 'alpha',
      target: `127.0.0.1:${echo.port}`,
      kind: 'tcp',
      ttl_s: 10,
    });
    expect(r.error).toBeUndefined();
    const socket = await liveConnection(r.data.tcp?.port as number);
    const started = Date.now();
    await closed(socket);
    expect(Date.now() - started).toBeLessThan(15_000);
    const list = await callTool<{ tunnels: TunnelOut[] }>(client, 'tunnels_list', {});
    expect(list.data.tunnels.map((t) => t.tunnel_id)).not.toContain(r.data.tunnel_id);
    await expect(echoThrough(r.data.tcp?.port as number, 'x')).rejects.toThrow();
    await waitFor('the expiry audited', () => closeReasons(account, r.data.tunnel_id).includes('expired'));
  }, 30_000);

  test('revoking the token that opened a tunnel closes it and its live connections', async () => {
    const mine = await account.token(owner.userId, policy([`127.0.0.1:${echo.port}`]));
    const ai = await mcpClient(gw.url, mine.token);
    try {
      const r = await callTool<TunnelOut>(ai, 'tunnel_open', {
        machine: 'alpha',
        target: `127.0.0.1:${echo.port}`,
        kind: 'tcp',
      });
      expect(r.error).toBeUndefined();
      const socket = await liveConnection(r.data.tcp?.port as number);
      const revoked = await asPerson(gw, owner, 'DELETE', `/api/tokens/${mine.id}`);
      expect(revoked.status).toBeLessThan(300);
      const started = Date.now();
      await closed(socket);
      expect(Date.now() - started).toBeLessThan(10_000);
      await waitFor('the revocation audited', () => closeReasons(account, r.data.tunnel_id).includes('revoked'));
    } finally {
      await ai.close().catch(() => undefined);
    }
  }, 30_000);

  test('a large download through a tunnel to a slow reader keeps the gateway’s memory flat', async () => {
    const r = await callTool<TunnelOut>(client, 'tunnel_open', {
      machine: 'alpha',
      target: `127.0.0.1:${portOf(blaster)}`,
      kind: 'tcp',
    });
    expect(r.error).toBeUndefined();
    const pid = gw.process?.child.pid as number;
    const before = memoryOf(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, memoryOf(pid));
    }, 50);
    try {
      const socket = connect({ host: '127.0.0.1', port: r.data.tcp?.port as number });
      let received = 0;
      await new Promise<void>((resolve, reject) => {
        socket.on('error', reject);
        // About 12 MiB/s: far slower than the machine can send.
        socket.on('data', (d: Buffer) => {
          received += d.length;
          socket.pause();
          setTimeout(() => socket.resume(), Math.ceil(d.length / (12 * 1024)));
        });
        socket.on('end', () => resolve());
      });
      expect(received).toBe(96 * 1024 * 1024);
    } finally {
      clearInterval(sampler);
    }
    // The 96 MiB went through a window of about a megabyte: the gateway held nowhere near all of it.
    expect(peak - before).toBeLessThan(48 * 1024 * 1024);
    await callTool(client, 'tunnel_close', { tunnel_id: r.data.tunnel_id });
  }, 90_000);

  test('letkite tunnel open forwards a local port to the machine’s service, with the token from a 0600 file', async () => {
    const dir = tempDir('tunnel-cli');
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${token.token}\n`, { mode: 0o600 });
    const local = await freePort();
    const cli = new CliProcess(
      ['tunnel', 'open', 'alpha', `127.0.0.1:${echo.port}`, '--local', String(local), '--token-file', tokenFile],
      { LETKITE_URL: gw.url },
    );
    try {
      const [line] = await cli.waitForOutput(/forwarding \S+ to .* \(tunnel (tun_[\w-]+)/, 60_000);
      const id = /tunnel (tun_[\w-]+)/.exec(line)?.[1] as string;
      expect(await echoThrough(local, 'through the laptop')).toBe('through the laptop');
      const big = 'x'.repeat(3 * 1024 * 1024);
      expect((await echoThrough(local, big)).length).toBe(big.length);
      await cli.stop();
      const list = await callTool<{ tunnels: TunnelOut[] }>(client, 'tunnels_list', {});
      expect(list.data.tunnels.map((t) => t.tunnel_id)).not.toContain(id);
    } finally {
      await cli.stop();
      removeDir(dir);
    }
  }, 90_000);

  test('letkite tunnel open waits for the approval a gated policy asks for, then forwards', async () => {
    const gated = await account.token(owner.userId, {
      ...policy([`127.0.0.1:${echo.port}`]),
      approval: { tools: ['tunnel_open'], approvers: 'any_admin', timeout: '10m' },
    });
    const local = await freePort();
    const cli = new CliProcess(
      ['tunnel', 'open', 'alpha', `127.0.0.1:${echo.port}`, '--local', String(local), '--ttl', '120'],
      { LETKITE_URL: gw.url, LETKITE_TOKEN: gated.token },
    );
    try {
      let approvalId = '';
      await waitFor(
        'the CLI to ask for an approval',
        () => {
          const row = account.store.sqlite
            .prepare("SELECT id FROM approval_requests WHERE status = 'pending' AND tool = 'tunnel_open'")
            .get() as { id: string } | undefined;
          approvalId = row?.id ?? '';
          return approvalId !== '';
        },
        60_000,
      );
      const decided = await asPerson(gw, owner, 'POST', `/api/approvals/${approvalId}/approve`, {
        method: 'totp',
        code: await totpCode(owner),
      });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      await cli.waitForOutput(/forwarding /, 60_000);
      expect(await echoThrough(local, 'approved by a person')).toBe('approved by a person');
    } finally {
      await cli.stop();
    }
  }, 120_000);

  test('the tunnel socket answers only the credential that opened the tunnel', async () => {
    const r = await callTool<TunnelOut>(client, 'tunnel_open', {
      machine: 'alpha',
      target: `127.0.0.1:${echo.port}`,
      kind: 'tcp',
    });
    const other = await account.token(owner.userId, policy([`127.0.0.1:${echo.port}`]));
    const status = (bearer: string | null) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/tunnels/${r.data.tunnel_id}/connect`, {
          headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
        });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('open', () => {
          ws.close();
          resolve(101);
        });
        ws.once('error', () => resolve(-1));
      });
    expect(await status(null)).toBe(401);
    expect(await status(other.token)).toBe(404);
    expect(await status(token.token)).toBe(101);
    await callTool(client, 'tunnel_close', { tunnel_id: r.data.tunnel_id });
  });

  test('a large http download to a slow reader through /t/ keeps the gateway’s memory flat too', async () => {
    const big = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(1024 * 1024, 9);
      let left = 96;
      const more = () => {
        while (left > 0) {
          left -= 1;
          if (!res.write(chunk)) {
            res.once('drain', more);
            return;
          }
        }
        res.end();
      };
      more();
    });
    await new Promise<void>((r) => big.listen(0, '127.0.0.1', r));
    const bigToken = await account.token(owner.userId, policy([`127.0.0.1:${portOf(big)}`]));
    const ai = await mcpClient(gw.url, bigToken.token);
    try {
      const opened = await callTool<TunnelOut>(ai, 'tunnel_open', {
        machine: 'alpha',
        target: `127.0.0.1:${portOf(big)}`,
        kind: 'http',
      });
      expect(opened.error).toBeUndefined();
      const pid = gw.process?.child.pid as number;
      const before = memoryOf(pid);
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, memoryOf(pid));
      }, 50);
      let received = 0;
      try {
        await new Promise<void>((resolve, reject) => {
          const req = httpGet(
            `${opened.data.url}blob`,
            { headers: { authorization: `Bearer ${bigToken.token}` } },
            (res) => {
              expect(res.statusCode).toBe(200);
              res.on('data', (d: Buffer) => {
                received += d.length;
                res.pause();
                setTimeout(() => res.resume(), Math.ceil(d.length / (12 * 1024)));
              });
              res.on('end', () => resolve());
              res.on('error', reject);
            },
          );
          req.on('error', reject);
        });
      } finally {
        clearInterval(sampler);
      }
      expect(received).toBe(96 * 1024 * 1024);
      expect(peak - before).toBeLessThan(48 * 1024 * 1024);
    } finally {
      await ai.close();
      big.close();
    }
  }, 90_000);

  test('tunnels close when their machine goes offline', async () => {
    const r = await callTool<TunnelOut>(client, 'tunnel_open', {
      machine: 'alpha',
      target: `127.0.0.1:${echo.port}`,
      kind: 'tcp',
    });
    expect(r.error).toBeUndefined();
    await agent.stop();
    await waitFor('the tunnel to close with its machine', async () => {
      const list = await callTool<{ tunnels: TunnelOut[] }>(client, 'tunnels_list', {});
      return !list.data.tunnels.some((t) => t.tunnel_id === r.data.tunnel_id);
    });
    expect(closeReasons(account, r.data.tunnel_id)).toEqual(['machine_offline']);
    await agent.start();
  }, 60_000);
});

describe('a compromised gateway cannot tunnel past the machine’s ceiling', () => {
  let rogue: RogueGateway;
  let agent: CliProcess;
  let stateDir: string;
  let ceilingDir: string;
  let forbidden: Awaited<ReturnType<typeof echoTcpServer>>;
  let sink: ReturnType<typeof createServer>;
  let sinkPort: number;
  // The request's policy allows everything: only the ceiling stands in the way.
  const wide = { policy: { name: 'wide', tunnel_targets: ['0.0.0.0/0:*', 'localhost:*'] } };

  beforeAll(async () => {
    forbidden = await echoTcpServer();
    // Accepts and never reads: whatever is pushed at it piles up in the agent unless the agent enforces credit.
    sink = createServer((s) => {
      s.pause();
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    sinkPort = portOf(sink);
    rogue = await RogueGateway.start();
    stateDir = tempDir('tunnel-rogue-state');
    ceilingDir = tempDir('tunnel-rogue-ceiling');
    writeFileSync(join(stateDir, 'agent.json'), JSON.stringify(rogue.agentState('mch_tunnel_rogue')), { mode: 0o600 });
    const ceilingPath = join(ceilingDir, 'ceiling.toml');
    writeFileSync(ceilingPath, `${FULL_SHELL_CEILING}tunnel_targets = ["10.0.0.0/8:*", "127.0.0.1:${sinkPort}"]\n`, {
      mode: 0o644,
    });
    agent = new CliProcess(['agent', 'run', '--state-dir', stateDir, '--ceiling', ceilingPath]);
    await rogue.connected();
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await rogue?.close();
    removeDir(stateDir);
    removeDir(ceilingDir);
    forbidden?.server.close();
    sink?.close();
  });

  test('an address or a name outside the ceiling is refused by the agent itself, and nothing is dialled', async () => {
    const byAddress = await rogue.request('tunnel_connect', { host: '127.0.0.1', port: forbidden.port }, wide);
    expect(byAddress.error?.code).toBe('blocked_by_ceiling');
    const byName = await rogue.request('tunnel_connect', { host: 'localhost', port: forbidden.port }, wide);
    expect(byName.error?.code).toBe('blocked_by_ceiling');
    expect(forbidden.connections()).toBe(0);
  });

  test('data pushed past the credit the agent granted ends the connection with protocol_error', async () => {
    const answer = rogue.request('tunnel_connect', { host: '127.0.0.1', port: sinkPort }, wide, 'flood1');
    await waitFor('the agent to report the connection up', () =>
      rogue.streamed('flood1').some((f) => f.type === 'credit'),
    );
    const payload = Buffer.alloc(512 * 1024, 1);
    for (let i = 0; i < 64; i += 1) rogue.sendRaw(Buffer.from(encodeDataFrame('flood1', payload)));
    expect((await answer).error?.code).toBe('protocol_error');
  });

  test('credit past any tunnel window ends the connection with protocol_error', async () => {
    const answer = rogue.request('tunnel_connect', { host: '127.0.0.1', port: sinkPort }, wide, 'credit1');
    await waitFor('the agent to report the connection up', () =>
      rogue.streamed('credit1').some((f) => f.type === 'credit'),
    );
    rogue.sendRaw({ type: 'credit', id: 'credit1', bytes: 512 * 1024 * 1024 });
    expect((await answer).error?.code).toBe('protocol_error');
  });
});

describe('tcp tunnels listen on the configured port range', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let client: Client;
  let echo: Awaited<ReturnType<typeof echoTcpServer>>;
  let only: number;

  beforeAll(async () => {
    echo = await echoTcpServer();
    only = await freePort();
    gw = await TestGateway.start({ LETKITE_TUNNEL_PORTS: `${only}-${only}` });
    agent = await gw.addAgent('ranged', {
      ceiling: `${FULL_SHELL_CEILING}tunnel_targets = ["127.0.0.1:${echo.port}"]\n`,
    });
    client = await mcpClient(
      gw.url,
      await gw.apiTokenWithGrant({
        policy: { name: 'ranged', tunnel_targets: [`127.0.0.1:${echo.port}`] },
        machines: '*',
        scopes: '*',
      }),
    );
    await machineOnline(client, 'ranged');
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
    echo?.server.close();
  });

  test('a tunnel gets a port of the range, and none is left for the next one', async () => {
    const first = await callTool<TunnelOut>(client, 'tunnel_open', {
      machine: 'ranged',
      target: `127.0.0.1:${echo.port}`,
      kind: 'tcp',
    });
    expect(first.error).toBeUndefined();
    expect(first.data.tcp).toEqual({ host: '127.0.0.1', port: only });
    expect(await echoThrough(only, 'ranged')).toBe('ranged');
    const second = await callTool(client, 'tunnel_open', {
      machine: 'ranged',
      target: `127.0.0.1:${echo.port}`,
      kind: 'tcp',
    });
    expect(second.error?.code).toBe('rate_limited');
    await callTool(client, 'tunnel_close', { tunnel_id: first.data.tunnel_id });
    const again = await callTool<TunnelOut>(client, 'tunnel_open', {
      machine: 'ranged',
      target: `127.0.0.1:${echo.port}`,
      kind: 'tcp',
    });
    expect(again.data.tcp?.port).toBe(only);
  });
});
