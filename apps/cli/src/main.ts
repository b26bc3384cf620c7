#!/usr/bin/env node
import { LetKiteError } from '@letkite/protocol';
import { type CliIo, EXIT_FAILED, EXIT_USAGE, UsageError } from './io';

const USAGE = `letkite — let AI clients work on real machines without handing them the keys

usage:
  letkite start [--port 8787] [--data ./.letkite]    gateway on SQLite + a local agent (what npm start runs)
  letkite gateway                                    the gateway alone, configured by LETKITE_* variables
  letkite agent join <gateway-url> <join-token|->    enroll this machine
  letkite agent run                                  run the agent
  letkite admin token create --name NAME [--policy NAME|FILE] [--expires 30d]
  letkite admin join-token [--ttl 15m] [--url URL]  print the one-line install for a machine
  letkite admin policy list|show NAME|create --file F.toml|update NAME --file F.toml|delete NAME
  letkite admin account show|set [--mcp-http on|off] [--stdio-bridge on|off] [--legacy-sse on|off] [--disable-tools G,…]
  letkite ceiling check [--ceiling PATH]             print the effective ceiling, or every error with its line
  letkite mcp [--config FILE]                        stdio MCP bridge to a gateway (URL and token from a 0600
                                                     file or LETKITE_URL/LETKITE_TOKEN, never the command line)
  letkite rules check --policy FILE [--confirm] [--jsonl] [--exit-code] [-- COMMAND]
                                                     judge a command (or one per stdin line) with a policy
  letkite tunnel open MACHINE HOST:PORT --local PORT [--token-file FILE]
                                                     forward a local port to HOST:PORT as seen from MACHINE
`;

type Command = (args: string[], io: CliIo) => Promise<number>;

async function ceiling(args: string[], io: CliIo): Promise<number> {
  if (args[0] !== 'check') throw new UsageError('usage: letkite ceiling check [--ceiling PATH]');
  const rest = args.slice(1);
  const withEnv =
    rest.includes('--ceiling') || !io.env.LETKITE_CEILING ? rest : ['--ceiling', io.env.LETKITE_CEILING, ...rest];
  const { ceilingCheck } = await import('./commands/ceiling-check');
  return ceilingCheck(withEnv, io);
}

async function rules(args: string[], io: CliIo): Promise<number> {
  if (args[0] !== 'check')
    throw new UsageError('usage: letkite rules check --policy FILE [--confirm] [--jsonl] [--exit-code] [-- COMMAND]');
  const [{ loadCommandRules }, { rulesCheck }] = await Promise.all([
    import('@letkite/command-rules'),
    import('./commands/rules-check'),
  ]);
  await loadCommandRules();
  return rulesCheck(args.slice(1), io);
}

// Each command loads its modules when it runs: `letkite agent run` never loads the gateway, `letkite admin` no MCP
// server (the build keeps them in separate chunks; bench/memory has the figures).
const commands: Record<string, Command> = {
  start: async (args, io) => (await import('./commands/start')).start(args, io),
  gateway: async (args, io) => (await import('./commands/gateway')).gateway(args, io),
  agent: async (args, io) => (await import('./commands/agent')).agent(args, io),
  admin: async (args, io) => (await import('./commands/admin')).admin(args, io),
  ceiling,
  rules,
  mcp: async (args, io) => (await import('./commands/mcp')).mcp(args, io),
  tunnel: async (args, io) => (await import('./commands/tunnel')).tunnel(args, io),
};

/** Runs one CLI invocation and returns its exit code (0 ok, 1 failed, 2 usage or invalid input). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (!command) {
    io.stderr.write(USAGE);
    return name === undefined || name === 'help' || name === '--help' ? 0 : EXIT_USAGE;
  }
  try {
    return await command(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`${err.message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof LetKiteError) {
      io.stderr.write(`letkite: ${err.code}: ${err.message}\n`);
      return err.code === 'invalid_params' ? EXIT_USAGE : EXIT_FAILED;
    }
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      io.stderr.write(`letkite: ${err.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr.write(`letkite: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_FAILED;
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const code = await runCli(process.argv.slice(2), {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
  process.exitCode = code;
  // Long-running commands (start, gateway, agent run) resolve only after a signal; then nothing should linger.
  if (['start', 'gateway', 'agent', 'mcp'].includes(process.argv[2] ?? '')) process.exit(code);
}
