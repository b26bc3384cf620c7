import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { joinGateway, loadState, saveState, writeDefaultCeiling } from '@letkite/agent';
import { DEFAULT_CEILING } from '@letkite/ceiling';
import {
  createApiToken,
  createJoinToken,
  createOwnerSetupLink,
  loadConfig,
  type RunningGateway,
  startGateway,
} from '@letkite/gateway';
import { DataDirLock } from '../data-dir-lock';
import { type CliIo, EXIT_OK } from '../io';
import { waitForSignal } from './gateway';

// Built (tools/build), this module is a chunk beside dist/cli/main.mjs.
const cliMain = fileURLToPath(new URL(import.meta.letkiteBundle ? './main.mjs' : '../main.ts', import.meta.url));
/**
 * What the local agent child runs: built, the standalone agent (dist/agent, a fraction of the CLI's memory) when it
 * was built; else the CLI itself (`letkite agent run`).
 */
const agentMain = (() => {
  const standalone = fileURLToPath(new URL('../agent/letkite-agent.mjs', import.meta.url));
  return import.meta.letkiteBundle && existsSync(standalone) ? standalone : cliMain;
})();
/**
 * The LetKite installation this runs from (the checkout, for `npm start`): the code the agent and the gateway
 * run, which a sandboxed command must not be able to change before the next start.
 */
const installRoot = resolve(dirname(cliMain), import.meta.letkiteBundle ? '../..' : '../../..');

/**
 * `letkite start` (what `npm start` runs): the embedded setup for one person — a gateway on SQLite under the data
 * directory, plus a local agent enrolled automatically and kept running as a child process. A second start reuses
 * the same data, machine and token.
 */
export async function start(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, data: { type: 'string' }, host: { type: 'string' } },
    strict: true,
  });
  const config = loadConfig({
    ...io.env,
    ...(values.port ? { LETKITE_PORT: values.port } : {}),
    ...(values.data ? { LETKITE_DATA: values.data } : {}),
    ...(values.host ? { LETKITE_HOST: values.host } : {}),
  });
  const log = (msg: string) => io.stderr.write(`${msg}\n`);
  // One person's gateway judges one person's calls: the bash grammar's wasm stays on V8's baseline compiler, as in
  // the agent (apps/cli/src/commands/agent.ts), instead of an optimized recompile that keeps ≈ 25 MiB (bench/memory).
  setFlagsFromString('--liftoff-only');
  // The data directory holds the owner token, the database, the secret key and the local agent: yours alone.
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(config.dataDir, 0o700);
  // Before anything opens the database: a second start on this directory stops here and says who holds it.
  const lock = DataDirLock.acquire(config.dataDir);
  if (lock.tookOverFrom)
    log(
      `[start] took over ${config.dataDir} from pid ${lock.tookOverFrom.pid} on ${lock.tookOverFrom.host}, no longer running`,
    );
  const gw = await startGateway(config, { log: (msg) => log(`[gateway] ${msg}`) });
  lock.setPort(gw.port);

  const agentDir = join(config.dataDir, 'agent');
  await ensureLocalAgent(gw, agentDir, log);
  // The local agent's own ceiling, next to its state: the documented defaults, running commands as you, with the
  // data directory and the LetKite installation denied (the agent also refuses both on its own, whatever this file
  // says: see --protect below).
  const ceiling = join(agentDir, 'ceiling.toml');
  writeDefaultCeiling(
    ceiling,
    { run_as: userInfo().username, deny: [...DEFAULT_CEILING.deny, config.dataDir, installRoot] },
    { mode: 0o600 },
  );
  if (statSync(ceiling).uid === process.getuid?.()) chmodSync(ceiling, 0o600);
  const token = await ensureOwnerToken(gw, config.dataDir);
  const agent = superviseAgent(agentDir, ceiling, config.dataDir, io);
  // Until the owner has a passkey or password, each start prints a fresh one-time setup link (the old one stops).
  const setup = await createOwnerSetupLink(
    { identity: gw.identity, now: new Date(), publicUrl: gw.url },
    { accountId: gw.account.id, ownerId: gw.owner.id },
  );

  io.stdout.write(
    [
      '',
      `LetKite is running on ${gw.url}`,
      setup ? `  set up:    ${setup.url}   (one-time owner setup link, valid 30 minutes)` : `  dashboard: ${gw.url}/`,
      `  data:      ${config.dataDir}`,
      `  machine:   this computer, enrolled as a local agent (ceiling: ${ceiling})`,
      token.created
        ? `  API token: ${token.token}   (shown this once; kept in ${token.file}, mode 0600)`
        : `  API token: kept in ${token.file} (mode 0600; shown only when it was created)`,
      '',
      'Connect Claude Code (OAuth: you choose machines, tools and policy on the consent page):',
      `  claude mcp add --transport http letkite ${gw.url}/mcp`,
      'or with the API token (full policy, every machine):',
      token.created
        ? `  claude mcp add --transport http letkite ${gw.url}/mcp --header "Authorization: Bearer ${token.token}"`
        : `  claude mcp add --transport http letkite ${gw.url}/mcp --header "Authorization: Bearer $(cat ${token.file})"`,
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  await waitForSignal();
  await agent.stop();
  await gw.close();
  lock.release();
  return EXIT_OK;
}

/**
 * Enrolls the local agent on first start; later starts reuse it (if its machine still exists). This process is the
 * gateway, so it pins its own identity key into the local agent's state directly (a state from before pinning too),
 * and points the agent at where it listens now: a start on another port must not leave the agent dialling the old
 * one.
 */
async function ensureLocalAgent(gw: RunningGateway, agentDir: string, log: (msg: string) => void): Promise<void> {
  const state = loadState(agentDir);
  if (state && (await gw.store.getMachine(state.machine_id))) {
    const url = new URL(gw.url).toString();
    if (state.gateway_public_key !== gw.gatewayIdentity.publicKey || state.gateway_url !== url) {
      if (state.gateway_url !== url) log(`[start] the local agent now dials ${url} (was ${state.gateway_url})`);
      saveState(agentDir, { ...state, gateway_url: url, gateway_public_key: gw.gatewayIdentity.publicKey });
    }
    return;
  }
  const join = await createJoinToken(
    { store: gw.store, now: new Date() },
    { accountId: gw.account.id, actor: 'system:start' },
  );
  await joinGateway({ gatewayUrl: gw.url, joinToken: join.token, stateDir: agentDir });
}

/**
 * The owner's API token for this installation, created once and kept in a 0600 file in the data directory. Its
 * value is printed only at creation (a terminal's scrollback and logs are not a place to keep it on every start).
 */
async function ensureOwnerToken(
  gw: RunningGateway,
  dataDir: string,
): Promise<{ file: string; created: false } | { file: string; created: true; token: string }> {
  const file = join(dataDir, 'owner-token');
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    return { file, created: false };
  }
  const created = await createApiToken(
    { store: gw.store, now: new Date() },
    {
      accountId: gw.account.id,
      userId: gw.owner.id,
      name: 'letkite start',
      grant: { policy: 'full', machines: '*', scopes: '*' },
      actor: 'system:start',
    },
  );
  writeFileSync(file, `${created.token}\n`, { mode: 0o600, flag: 'wx' });
  return { file, created: true, token: created.token };
}

/**
 * Runs `letkite agent run` as a child and restarts it if it dies, until stopped. The agent is told to keep the
 * data directory, the installation it runs from and this gateway process (its /proc entry: environment, open
 * database) out of every tool's reach, and gets no LETKITE_* variable of the gateway's (a secret key, database or
 * SMTP URL may be among them).
 */
function superviseAgent(agentDir: string, ceiling: string, dataDir: string, io: CliIo): { stop(): Promise<void> } {
  let child: ChildProcess | null = null;
  let stopped = false;
  const launch = () => {
    child = spawn(
      process.execPath,
      [
        ...process.execArgv,
        agentMain,
        'agent',
        'run',
        '--state-dir',
        agentDir,
        '--ceiling',
        ceiling,
        '--protect',
        dataDir,
        '--protect',
        installRoot,
        '--protect',
        `/proc/${process.pid}`,
      ],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: {
          ...withoutLetKiteVariables(process.env),
          // The one agent setting passed on: not a secret, and how long an idle launcher stays (issue #13).
          ...(process.env.LETKITE_EXEC_LAUNCHER_IDLE_MS === undefined
            ? {}
            : { LETKITE_EXEC_LAUNCHER_IDLE_MS: process.env.LETKITE_EXEC_LAUNCHER_IDLE_MS }),
          // glibc gives freed memory back above 128 KiB instead of a threshold that grows to 64 MiB: about 4 MiB
          // less for an idle agent, as infra/systemd/letkite-agent.service sets it (issue #13).
          MALLOC_TRIM_THRESHOLD_: process.env.MALLOC_TRIM_THRESHOLD_ ?? '131072',
          LETKITE_AGENT_STATE: agentDir,
        },
      },
    );
    child.on('exit', (code, signal) => {
      if (stopped) return;
      io.stderr.write(`[start] local agent exited (${signal ?? code}); restarting in 1 s\n`);
      setTimeout(launch, 1000);
    });
  };
  launch();
  return {
    /** SIGTERM, then wait for the agent to finish its own clean shutdown (SIGKILL after 5 s). */
    async stop() {
      stopped = true;
      const c = child as ChildProcess | null;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      c.kill('SIGTERM');
      const killer = setTimeout(() => c.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}

function withoutLetKiteVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('LETKITE_')));
}
