import { readFileSync, statSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { LetKiteError } from '@letkite/protocol';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createWebSocketStream, WebSocket } from 'ws';
import { type CliIo, EXIT_FAILED, EXIT_OK, UsageError } from '../io';
import { resolveBridgeConfig } from './mcp';

const USAGE =
  'usage: letkite tunnel open MACHINE HOST:PORT --local PORT [--bind ADDRESS] [--ttl SECONDS]\n' +
  '                           [--token-file FILE | --config FILE]\n' +
  '  Opens a tunnel to HOST:PORT as seen from MACHINE and forwards 127.0.0.1:PORT (or --bind) on this computer\n' +
  '  to it through the gateway, until Ctrl-C. The gateway URL comes from LETKITE_URL (or the config file of\n' +
  '  letkite mcp); the API token from --token-file (mode 0600), LETKITE_TOKEN or that file — never the command line.';

interface TunnelAnswer {
  tunnel_id?: string;
  expires_at?: string;
  status?: string;
  approval_id?: string;
  message?: string;
}

/** A token file must be private: readable by its owner only, like the bridge's config file. */
function readTokenFile(path: string): string {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new LetKiteError(
      'forbidden',
      `${path} is readable or writable by others (mode ${mode.toString(8)}); chmod 600 it`,
    );
  }
  const token = readFileSync(path, 'utf8').trim();
  if (token === '') throw new LetKiteError('invalid_params', `${path} is empty`);
  return token;
}

function toolAnswer(result: Awaited<ReturnType<Client['callTool']>>): TunnelAnswer {
  const text = (result.content as { type: string; text?: string }[] | undefined)?.[0]?.text ?? '{}';
  const body = (result.structuredContent ?? JSON.parse(text)) as TunnelAnswer & { code?: string; message?: string };
  if (result.isError) throw new LetKiteError((body.code ?? 'internal') as never, body.message ?? 'tunnel_open failed');
  return body;
}

/** Waits (approval_wait, 45 s at a time) until a person decided; the final status. */
async function waitForApproval(client: Client, approvalId: string, log: (msg: string) => void): Promise<string> {
  for (;;) {
    const r = toolAnswer(
      await client.callTool({ name: 'approval_wait', arguments: { approval_id: approvalId } }, undefined, {
        timeout: 60_000,
      }),
    );
    if (r.status !== 'pending') return r.status ?? 'denied';
    log('still waiting for an approval');
  }
}

/** The gateway's WebSocket URL for one connection of a tunnel. */
function socketUrl(gateway: string, tunnelId: string): string {
  const u = new URL(`/tunnels/${tunnelId}/connect`, gateway);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.toString();
}

/** Carries one local connection over its own WebSocket to the gateway, with backpressure both ways. */
function forward(local: Socket, url: string, token: string, log: (msg: string) => void): void {
  local.pause();
  const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
  ws.once('unexpected-response', (_req, res) => {
    log(`the gateway refused the connection (HTTP ${res.statusCode})`);
    local.destroy();
  });
  ws.once('open', () => {
    const remote = createWebSocketStream(ws);
    remote.on('error', () => local.destroy());
    local.pipe(remote);
    remote.pipe(local);
    local.resume();
  });
  ws.once('error', () => local.destroy());
  local.on('error', () => ws.terminate());
  local.once('close', () => ws.close());
}

/**
 * `letkite tunnel open MACHINE HOST:PORT --local PORT`: opens a tcp tunnel with the person's API token (the same
 * tool an AI calls, so the same policy, ceiling and approvals apply), then forwards every connection to the local
 * port over a WebSocket of its own. Ctrl-C closes the tunnel.
 */
export async function tunnel(args: string[], io: CliIo): Promise<number> {
  if (args[0] !== 'open') throw new UsageError(USAGE);
  const { values, positionals } = parseArgs({
    args: args.slice(1),
    options: {
      local: { type: 'string' },
      bind: { type: 'string', default: '127.0.0.1' },
      ttl: { type: 'string' },
      'token-file': { type: 'string' },
      config: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [machine, target] = positionals;
  const localPort = Number(values.local);
  if (
    !machine ||
    !target ||
    positionals.length !== 2 ||
    !Number.isInteger(localPort) ||
    localPort < 0 ||
    localPort > 65535
  ) {
    throw new UsageError(USAGE);
  }
  const env = values['token-file'] ? { ...io.env, LETKITE_TOKEN: readTokenFile(values['token-file']) } : io.env;
  const { url, token } = resolveBridgeConfig(values.config, env);
  const log = (msg: string) => io.stderr.write(`[letkite tunnel] ${msg}\n`);

  const client = new Client({ name: 'letkite-tunnel', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
  const open = async () =>
    toolAnswer(
      await client.callTool({
        name: 'tunnel_open',
        arguments: { machine, target, kind: 'tcp', ...(ttl === undefined ? {} : { ttl_s: ttl }) },
      }),
    );
  let opened = await open();
  if (opened.status === 'pending_approval' && opened.approval_id) {
    // The same call, repeated once a person approved it (the approval is bound to exactly these arguments).
    io.stderr.write(`${opened.message ?? 'the tunnel waits for an approval'}\n`);
    if ((await waitForApproval(client, opened.approval_id, log)) === 'approved') opened = await open();
  }
  if (!opened.tunnel_id) {
    io.stderr.write('letkite: the tunnel was not opened (no approval)\n');
    await client.close();
    return EXIT_FAILED;
  }
  const tunnelId = opened.tunnel_id;
  const server = createServer((local) => forward(local, socketUrl(url, tunnelId), token, log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(localPort, values.bind, () => resolve());
  });
  const address = server.address();
  const shown = typeof address === 'object' && address ? `${values.bind}:${address.port}` : String(localPort);
  io.stdout.write(`forwarding ${shown} to ${target} on ${machine} (tunnel ${tunnelId}, until ${opened.expires_at})\n`);

  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
    // The tunnel closes by itself at its expiry: nothing to forward to after that.
    const left = Date.parse(opened.expires_at ?? '') - Date.now();
    if (Number.isFinite(left)) setTimeout(resolve, Math.max(0, left)).unref();
  });
  server.close();
  await client.callTool({ name: 'tunnel_close', arguments: { tunnel_id: tunnelId } }).catch(() => undefined);
  await client.close();
  log(`tunnel ${tunnelId} closed`);
  return EXIT_OK;
}
