/**
 * bench/terminal: output throughput of a terminal. Three stages, each over the same `seq` output:
 *   1. raw pty: node-pty alone, bytes read from the pty (the ceiling for everything after it);
 *   2. pty + emulator: the agent's TerminalSession (node-pty feeding @xterm/headless), until everything is rendered;
 *   3. end to end: an MCP client runs the command in a terminal_open'ed terminal through a real gateway and agent
 *      and waits (terminal_wait) for the end marker, then reads it back with terminal_read.
 * Prints MB/s per stage (median of the runs).
 *
 *   npx tsx bench/terminal/run.ts [lines=1000000] [runs=3]
 */
import { userInfo } from 'node:os';
import * as pty from 'node-pty';
import { TerminalSession } from '../../apps/agent/src/terminals/terminal';
import { callTool, FULL_SHELL_CEILING, mcpClient, TestGateway } from '../../test/support/letkite';

const LINES = Number(process.argv[2] ?? 1_000_000);
const RUNS = Number(process.argv[3] ?? 3);
// `seq 1 N` prints this many bytes.
let bytes = 0;
for (let i = 1; i <= LINES; i++) bytes += String(i).length + 1;
const MB = bytes / 1e6;
const command = `seq 1 ${LINES}; echo BENCH-$((6*7))-END`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function rawPty(): Promise<number> {
  const t = performance.now();
  await new Promise<void>((resolve) => {
    const p = pty.spawn('/bin/sh', ['-c', command], { cols: 120, rows: 40, env: { PATH: '/usr/bin:/bin' } });
    p.onData(() => {});
    p.onExit(() => resolve());
  });
  return performance.now() - t;
}

async function emulated(): Promise<number> {
  const account = userInfo();
  const t = performance.now();
  const session = new TerminalSession(
    'bench',
    {
      plan: {
        file: '/bin/sh',
        args: ['-c', `${command}; sleep 5`],
        env: { PATH: '/usr/bin:/bin', TERM: 'xterm-256color' },
      },
      cwd: '/',
      account: {
        name: account.username,
        uid: account.uid,
        gid: account.gid,
        home: account.homedir,
        shell: '/bin/sh',
        switchUser: false,
      },
      sandboxed: false,
      release: () => {},
    },
    120,
    40,
  );
  // Rendered means: the end marker is on the emulator's screen.
  while (!session.read('visible', 40).text.includes('BENCH-42-END')) {
    if (session.ended) throw new Error('emulator missed the end marker');
    await session.waitForOutput(session.outputVersion, 1000);
  }
  const elapsed = performance.now() - t;
  session.close();
  return elapsed;
}

const gw = await TestGateway.start();
const agent = await gw.addAgent('bench', { ceiling: `${FULL_SHELL_CEILING}terminals = true\n` });
const client = await mcpClient(gw.url, await gw.apiToken('bench'));

async function endToEnd(): Promise<number> {
  const opened = await callTool<{ terminal_id: string }>(client, 'terminal_open', {
    machine: 'bench',
    cols: 120,
    rows: 40,
  });
  const id = opened.data.terminal_id;
  const t = performance.now();
  await callTool(client, 'terminal_send', { machine: 'bench', terminal_id: id, text: command, submit: true });
  const r = await callTool<{ matched: boolean }>(
    client,
    'terminal_wait',
    { machine: 'bench', terminal_id: id, pattern: 'BENCH-42-END', timeout_s: 60 },
    { timeout: 120_000 },
  );
  const screen = await callTool<{ text: string }>(client, 'terminal_read', {
    machine: 'bench',
    terminal_id: id,
    mode: 'visible',
  });
  const elapsed = performance.now() - t;
  if (!r.data.matched || !screen.data.text.includes('BENCH-42-END')) throw new Error('end marker not seen');
  await callTool(client, 'terminal_close', { machine: 'bench', terminal_id: id });
  return elapsed;
}

const results: Record<string, number[]> = { raw: [], emulated: [], e2e: [] };
try {
  for (let i = 0; i < RUNS; i++) {
    results.raw?.push(await rawPty());
    results.emulated?.push(await emulated());
    results.e2e?.push(await endToEnd());
  }
} finally {
  await client.close();
  await agent.dispose();
  await gw.dispose();
}

const row = (name: string, ms: number[]) => {
  const m = median(ms);
  return `| ${name} | ${(m / 1000).toFixed(2)} s | ${(MB / (m / 1000)).toFixed(1)} MB/s |`;
};
console.log(
  `\nterminal output throughput: seq 1 ${LINES} (${MB.toFixed(1)} MB), median of ${RUNS} (${new Date().toISOString().slice(0, 10)}, ${process.version})`,
);
console.log('| stage | time | throughput |');
console.log('|---|---|---|');
console.log(row('node-pty alone', results.raw ?? []));
console.log(row('pty + @xterm/headless (agent)', results.emulated ?? []));
console.log(row('MCP terminal_send → terminal_wait → terminal_read (gateway + agent)', results.e2e ?? []));
process.exit(0);
