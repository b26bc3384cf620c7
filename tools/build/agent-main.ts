/**
 * The entry point of the standalone agent (dist/agent/letkite-agent.mjs): `letkite agent …` and
 * `letkite ceiling check` without the gateway, the MCP bridge or the web app, so the bundle carries only what a
 * machine runs. Same commands, flags and exit codes as the full CLI:
 *
 *   node letkite-agent.mjs join <gateway-url> <join-token|-> [--name NAME] [--state-dir DIR] [--ceiling PATH]
 *   node letkite-agent.mjs run [--state-dir DIR] [--ceiling PATH]
 *   node letkite-agent.mjs ceiling check [--ceiling PATH]
 *   node letkite-agent.mjs ceiling init [--ceiling PATH]     write the commented defaults unless a ceiling exists
 *   node letkite-agent.mjs version
 */
import { parseArgs } from 'node:util';
import { AGENT_VERSION, writeDefaultCeiling } from '@letkite/agent';
import { DEFAULT_CEILING_PATH } from '@letkite/ceiling';
import { LetKiteError } from '@letkite/protocol';
import { agent } from '../../apps/cli/src/commands/agent';
import { ceilingCheck } from '../../apps/cli/src/commands/ceiling-check';
import { type CliIo, EXIT_FAILED, EXIT_USAGE, UsageError } from '../../apps/cli/src/io';

const USAGE = `letkite-agent ${AGENT_VERSION} — the LetKite agent

usage (the same with "letkite agent join|run" through the installed bin/letkite):
  letkite-agent join <gateway-url> <join-token|-> [--name NAME] [--state-dir DIR] [--ceiling PATH]
  letkite-agent run [--state-dir DIR] [--ceiling PATH]
  letkite-agent ceiling check [--ceiling PATH]
  letkite-agent ceiling init [--ceiling PATH]
  letkite-agent version
`;

async function main(argv: string[], io: CliIo): Promise<number> {
  // `letkite agent run` and `letkite-agent run` alike: the installer's bin/letkite runs this bundle, so the unit
  // in infra/systemd (ExecStart=/opt/letkite/bin/letkite agent run) is the same for a checkout and this build.
  const [name, ...rest] = argv[0] === 'agent' ? argv.slice(1) : argv;
  if (name === 'join' || name === 'run') return agent([name, ...rest], io);
  if (name === 'ceiling' && rest[0] === 'check') {
    const args = rest.slice(1);
    const withEnv =
      args.includes('--ceiling') || !io.env.LETKITE_CEILING ? args : ['--ceiling', io.env.LETKITE_CEILING, ...args];
    return ceilingCheck(withEnv, io);
  }
  if (name === 'ceiling' && rest[0] === 'init') {
    const { values } = parseArgs({ args: rest.slice(1), options: { ceiling: { type: 'string' } }, strict: true });
    const path = values.ceiling ?? io.env.LETKITE_CEILING ?? DEFAULT_CEILING_PATH;
    io.stdout.write(
      writeDefaultCeiling(path) ? `Wrote the default ceiling to ${path}.\n` : `Kept the existing ceiling ${path}.\n`,
    );
    return 0;
  }
  if (name === 'version' || name === '--version') {
    io.stdout.write(`${AGENT_VERSION}\n`);
    return 0;
  }
  io.stderr.write(USAGE);
  return name === undefined || name === 'help' || name === '--help' ? 0 : EXIT_USAGE;
}

const io: CliIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
let code: number;
try {
  code = await main(process.argv.slice(2), io);
} catch (err) {
  if (err instanceof UsageError) {
    io.stderr.write(`${err.message}\n`);
    code = EXIT_USAGE;
  } else if (err instanceof LetKiteError) {
    io.stderr.write(`letkite-agent: ${err.code}: ${err.message}\n`);
    code = err.code === 'invalid_params' ? EXIT_USAGE : EXIT_FAILED;
  } else {
    io.stderr.write(`letkite-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    code = EXIT_FAILED;
  }
}
// `run` resolves only after a signal; then nothing (a half-closed socket, a timer) should keep the process alive.
process.exit(code);
