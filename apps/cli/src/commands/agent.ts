import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import {
  Agent,
  commandRulesIdleFromEnv,
  gatewayKeyFingerprint,
  joinGateway,
  loadState,
  prepareRunAsAccount,
  type RunAsAccount,
  screenConfigFromEnv,
  writeDefaultCeiling,
} from '@letkite/agent';
import { DEFAULT_CEILING_PATH } from '@letkite/ceiling';
import { type CliIo, EXIT_FAILED, EXIT_OK, UsageError } from '../io';
import { agentStateDir } from '../paths';

const USAGE =
  'usage: letkite agent join <gateway-url> <join-token|-> [--name NAME] [--state-dir DIR] [--ceiling PATH] [--run-as USER]\n' +
  '                     [--insecure]\n' +
  '       letkite agent run [--state-dir DIR] [--ceiling PATH] [--protect PATH]...';

/** The ceiling file: --ceiling, else LETKITE_CEILING, else /etc/letkite/ceiling.toml. */
function ceilingPath(flag: string | undefined, env: Record<string, string | undefined>): string {
  return flag ?? env.LETKITE_CEILING ?? DEFAULT_CEILING_PATH;
}

/** `letkite agent join|run`. */
export async function agent(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'join') return join(rest, io);
  if (sub === 'run') return run(rest, io);
  throw new UsageError(USAGE);
}

async function readStdin(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8').trim();
}

async function join(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'state-dir': { type: 'string' },
      ceiling: { type: 'string' },
      insecure: { type: 'boolean' },
      'run-as': { type: 'string' },
    },
    strict: true,
  });
  const [url, tokenArg] = positionals;
  // The token may come on stdin (`-`) or in LETKITE_JOIN_TOKEN, to keep it out of shell history and `ps`.
  const token = tokenArg === '-' ? await readStdin(io.stdin) : (tokenArg ?? io.env.LETKITE_JOIN_TOKEN);
  if (!url || !token) throw new UsageError(USAGE);
  const stateDir = agentStateDir(values['state-dir'], io.env);
  const ceiling = ceilingPath(values.ceiling, io.env);
  // A --run-as naming no account is refused before the join token is spent.
  const chosen = values['run-as'] === undefined ? undefined : prepareRunAsAccount(values['run-as']);
  const state = await joinGateway({
    gatewayUrl: url,
    joinToken: token,
    stateDir,
    ...(values.name ? { name: values.name } : {}),
    insecure: values.insecure ?? false,
  });
  io.stdout.write(`Joined ${state.gateway_url} as "${state.name}" (${state.machine_id}). State in ${stateDir}.\n`);
  const asked = values.name ?? hostname();
  if (state.name.toLowerCase() !== asked.toLowerCase()) {
    // Names are unique in an account: a taken host name got a suffix.
    io.stdout.write(
      `A machine named "${asked}" is already enrolled, so this one is "${state.name}"; rename it with ` +
        `"letkite admin machine rename ${state.machine_id} NAME" or on the dashboard.\n`,
    );
  }
  // The pin is what the agent will demand on every connect; the gateway logs the same fingerprint at start-up.
  io.stdout.write(
    `Pinned the gateway identity ${gatewayKeyFingerprint(state.gateway_public_key ?? '')}` +
      `${state.gateway_tls_pin ? ` and its TLS certificate key sha256/${state.gateway_tls_pin}` : ''}.\n`,
  );
  try {
    // A ceiling already there keeps its own run_as; a new one names an account that exists (made now if need be).
    const runAs = existsSync(ceiling) ? null : (chosen ?? prepareRunAsAccount());
    if (runAs && writeDefaultCeiling(ceiling, { run_as: runAs.account })) {
      io.stdout.write(
        `Wrote the default ceiling to ${ceiling}: read it and tighten what this machine does not need.\n`,
      );
      io.stdout.write(`${runAsSentence(runAs)}\n`);
    }
  } catch (err) {
    io.stdout.write(
      `Could not write ${ceiling} (${(err as Error).message}); the agent uses the documented defaults.\n`,
    );
  }
  io.stdout.write('Start the agent with: letkite agent run\n');
  return EXIT_OK;
}

/** What the join tells the person about the account commands will run as. */
function runAsSentence(r: RunAsAccount): string {
  switch (r.how) {
    case 'created':
      return `Commands run as "${r.account}": created it now as a system account (no login shell, no home).`;
    case 'existing':
    case 'chosen':
      return `Commands run as the existing account "${r.account}".`;
    case 'current_user':
      return `Commands run as you ("${r.account}"): the agent is not root, so it cannot run them as anyone else.`;
  }
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      'state-dir': { type: 'string' },
      ceiling: { type: 'string' },
      protect: { type: 'string', multiple: true },
    },
    strict: true,
  });
  const stateDir = agentStateDir(values['state-dir'], io.env);
  const state = loadState(stateDir);
  if (!state) {
    io.stderr.write(`letkite: no agent state in ${stateDir}; run "letkite agent join <gateway-url> <token>" first\n`);
    return EXIT_FAILED;
  }
  if (!state.gateway_public_key) {
    // Fail closed: no trust-on-first-use, since whoever answers first on the URL may be an impostor.
    io.stderr.write(
      `letkite: the agent state in ${stateDir} has no pinned gateway identity (it was enrolled by an older LetKite), ` +
        'so the agent will not connect. Re-join with a new join token from the gateway:\n' +
        `  letkite agent join ${state.gateway_url} - --state-dir ${stateDir} < token-file\n`,
    );
    return EXIT_FAILED;
  }
  // Before the bash grammar (1.3 MB of wasm) is compiled: V8's optimizing tier recompiles it in the background
  // after the first parses, about 25 MiB of RSS that an idle agent keeps for good (bench/memory). The agent judges
  // a few commands a minute; the baseline compiler's code parses one in well under a millisecond.
  setFlagsFromString('--liftoff-only');
  const a = new Agent(state, {
    log: (msg) => io.stderr.write(`[agent] ${msg}\n`),
    ceilingPath: ceilingPath(values.ceiling, io.env),
    stateDir,
    protectedPaths: values.protect ?? [],
    screen: screenConfigFromEnv(io.env, process.platform, hostname()),
    commandRulesIdleMs: commandRulesIdleFromEnv(io.env.LETKITE_COMMAND_RULES_IDLE_MS),
  });
  await a.start();
  await new Promise<void>((resolve) => {
    // Ctrl-C under `letkite start` brings SIGINT from the terminal and SIGTERM from the supervisor: stop once.
    let stopping: Promise<void> | null = null;
    const stop = () => {
      stopping ??= a.stop();
      void stopping.then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return EXIT_OK;
}
