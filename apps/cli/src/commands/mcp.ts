import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LetKiteError } from '@letkite/protocol';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type CliIo, EXIT_OK, UsageError } from '../io';

const USAGE =
  'usage: letkite mcp [--config FILE]\n' +
  '  Bridges an MCP client speaking stdio to a LetKite gateway. The gateway URL and token come from FILE\n' +
  '  (default ~/.config/letkite/mcp.json: {"url": "...", "token": "..."}, in a 0700 directory, mode 0600)\n' +
  '  or from LETKITE_URL and LETKITE_TOKEN — never from the command line.';

const McpConfig = z.object({ url: z.string().url().optional(), token: z.string().min(1).optional() });

/** The default config file: $XDG_CONFIG_HOME/letkite/mcp.json or ~/.config/letkite/mcp.json. */
export function defaultConfigPath(env: Record<string, string | undefined>): string {
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'letkite', 'mcp.json');
}

/**
 * Reads the bridge's config file, refusing one that others could read or swap: the file must be owned by us and
 * not readable or writable by group or others, and its directory must be ours and 0700.
 */
export function readConfigFile(path: string): z.infer<typeof McpConfig> {
  const uid = process.getuid?.();
  const file = statSync(path);
  const dir = statSync(dirname(path));
  if ((file.mode & 0o077) !== 0) {
    throw new LetKiteError(
      'forbidden',
      `${path} is readable or writable by others (mode ${(file.mode & 0o777).toString(8)}); chmod 600 it`,
    );
  }
  if ((dir.mode & 0o077) !== 0) {
    throw new LetKiteError(
      'forbidden',
      `${dirname(path)} is open to others (mode ${(dir.mode & 0o777).toString(8)}); chmod 700 it`,
    );
  }
  if (uid !== undefined && (file.uid !== uid || dir.uid !== uid)) {
    throw new LetKiteError('forbidden', `${path} and its directory must belong to you`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new LetKiteError('invalid_params', `${path} is not valid JSON`);
  }
  const r = McpConfig.safeParse(parsed);
  if (!r.success) throw new LetKiteError('invalid_params', `${path}: expected {"url": "...", "token": "..."}`);
  return r.data;
}

/** URL and token: the environment first, then the config file (which must exist when named with --config). */
export function resolveBridgeConfig(
  configFlag: string | undefined,
  env: Record<string, string | undefined>,
): { url: string; token: string } {
  let fromFile: z.infer<typeof McpConfig> = {};
  const path = configFlag ? resolve(configFlag) : defaultConfigPath(env);
  const needFile = configFlag !== undefined || !env.LETKITE_TOKEN || !env.LETKITE_URL;
  if (needFile) {
    let exists = true;
    try {
      statSync(path);
    } catch {
      exists = false;
    }
    if (exists) fromFile = readConfigFile(path);
    else if (configFlag !== undefined) throw new LetKiteError('not_found', `no config file at ${path}`);
  }
  const url = env.LETKITE_URL ?? fromFile.url;
  const token = env.LETKITE_TOKEN ?? fromFile.token;
  if (!url || !token) {
    throw new UsageError(`letkite mcp needs a gateway URL and token (LETKITE_URL/LETKITE_TOKEN or ${path})\n${USAGE}`);
  }
  return { url, token };
}

function mcpEndpoint(url: string): URL {
  const u = new URL(url);
  if (!u.pathname.endsWith('/mcp')) u.pathname = `${u.pathname.replace(/\/$/, '')}/mcp`;
  return u;
}

/**
 * `letkite mcp`: relays JSON-RPC messages unchanged between stdio (the client) and the gateway's Streamable HTTP
 * endpoint, so tools, progress notifications and cancellation behave exactly as over HTTP. Logs go to stderr;
 * stdout carries only the protocol.
 */
export async function mcp(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { config: { type: 'string' } }, strict: true });
  const { url, token } = resolveBridgeConfig(values.config, io.env);
  const http = new StreamableHTTPClientTransport(mcpEndpoint(url), {
    // The header names this transport for the account switch "stdio bridge" (gateway policy/account-switches.ts).
    requestInit: { headers: { Authorization: `Bearer ${token}`, 'X-LetKite-Transport': 'stdio' } },
  });
  const stdio = new StdioServerTransport(io.stdin as NodeJS.ReadStream, io.stdout as NodeJS.WriteStream);
  const log = (msg: string) => io.stderr.write(`[letkite mcp] ${msg}\n`);
  const initializeIds = new Set<string | number>();
  // Messages piped right behind `initialize` wait for its answer: before it the HTTP transport has no session id,
  // and the gateway refuses them ("no session id"). Each waits on the gate in arrival order.
  let gate: Promise<void> = Promise.resolve();
  const initializing = new Map<string | number, () => void>();

  http.onmessage = (message: JSONRPCMessage) => {
    // The HTTP transport must send the negotiated version on every later request (the SDK client does this).
    const answered = 'id' in message && ('result' in message || 'error' in message) ? message.id : undefined;
    if (answered !== undefined && initializeIds.delete(answered)) {
      const version = 'result' in message ? (message.result as { protocolVersion?: unknown }).protocolVersion : null;
      if (typeof version === 'string') http.setProtocolVersion(version);
      // The answer goes out first, then whatever waited behind the initialize.
      stdio
        .send(message)
        .catch((err: unknown) => log(`stdout: ${String(err)}`))
        .finally(() => {
          initializing.get(answered)?.();
          initializing.delete(answered);
        });
      return;
    }
    stdio.send(message).catch((err: unknown) => log(`stdout: ${String(err)}`));
  };
  http.onerror = (err) => log(String(err.message));
  const forward = (message: JSONRPCMessage) => {
    // Not awaited: a long tool call must not hold back the next message (or its cancellation).
    http.send(message).catch((err: unknown) => {
      if (isJSONRPCRequest(message)) {
        initializing.get(message.id)?.();
        initializing.delete(message.id);
      }
      log(`gateway: ${err instanceof Error ? err.message : String(err)}`);
      if (isJSONRPCRequest(message)) {
        void stdio.send({
          jsonrpc: '2.0',
          id: message.id,
          error: {
            code: -32603,
            message: `letkite gateway unreachable or refused the request: ${err instanceof Error ? err.message : String(err)}`,
          },
        });
      }
    });
  };
  stdio.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && message.method === 'initialize') {
      initializeIds.add(message.id);
      const previous = gate;
      gate = new Promise<void>((opened) => initializing.set(message.id, opened));
      void previous.then(() => forward(message));
      return;
    }
    void gate.then(() => forward(message));
  };

  await http.start();
  await stdio.start();
  await new Promise<void>((done) => {
    io.stdin.once('end', () => done());
    io.stdin.once('close', () => done());
  });
  try {
    await http.terminateSession();
  } catch {
    // The session may already be gone (gateway restarted); nothing to clean up then.
  }
  await http.close();
  await stdio.close();
  return EXIT_OK;
}
