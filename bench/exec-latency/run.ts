/**
 * bench/exec-latency: N sequential MCP `exec` calls of `true` through a real gateway and agent, against spawning
 * `true` directly from Node and against `ssh` to a local sshd — alternating, in one run, so machine noise hits all
 * alike. A second agent with `LETKITE_EXEC_LAUNCHER=off` (spawning in the agent process instead of its launcher)
 * shows what the launcher is worth. ssh runs twice: a new connection per call, and over one reused ControlMaster
 * connection (what a well-configured ssh client pays per command). Two more MCP rows split an exec's cost:
 * `machines_list` (client, HTTP and gateway, no agent) and a small `read_file` (the same plus the WebSocket hop to
 * the agent and its judging, no process started). Prints p50/p99 and the ratios.
 *
 *   npx tsx bench/exec-latency/run.ts [N | --quick]
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { callTool, mcpClient, TestGateway } from '../../test/support/letkite';
import { freePort, tempDir } from '../../test/support/processes';
import { loadAverage } from '../support/proc-stats';
import { LocalSshd } from '../support/sshd';
import { fmtMs, summary } from '../support/stats';

const execFileAsync = promisify(execFile);
const N = process.argv[2] === '--quick' ? 60 : Number(process.argv[2] ?? 300);
const SSH_EVERY = 5;

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn('true', [], { stdio: 'ignore' });
    c.on('error', reject);
    c.on('exit', () => resolve());
  });
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const gw = await TestGateway.start();
const agent = await gw.addAgent('bench');
const agentInProcess = await gw.addAgent('bench-inproc', { env: { LETKITE_EXEC_LAUNCHER: 'off' } });
const client = await mcpClient(gw.url, await gw.apiToken('bench'));
const sshd = LocalSshd.available() ? new LocalSshd(tempDir('sshd'), await freePort()) : null;
await sshd?.start();
// One master connection kept open; every call after it opens only a new channel on it.
const controlPath = join(tempDir('ssh-control'), 'master');
const viaMaster = sshd ? sshd.sshArgs(['-o', `ControlPath=${controlPath}`]) : [];
const master = sshd
  ? spawn('ssh', [...sshd.sshArgs(['-o', `ControlPath=${controlPath}`, '-o', 'ControlMaster=yes', '-N'])], {
      stdio: 'ignore',
    })
  : null;
if (sshd) {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && !existsSync(controlPath)) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(controlPath)) throw new Error('the ssh ControlMaster did not start');
}

const smallFile = join(tempDir('exec-latency'), 'small.txt');
writeFileSync(smallFile, 'a small file\n');
const mcp: number[] = [];
const mcpInProcess: number[] = [];
const mcpList: number[] = [];
const mcpRead: number[] = [];
const call = (tool: string, args: Record<string, unknown>) => async () => {
  const r = await callTool(client, tool, args);
  if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
};
const listMachines = call('machines_list', {});
const readSmall = call('read_file', { machine: 'bench', path: smallFile });
const direct: number[] = [];
const ssh: number[] = [];
const sshMaster: number[] = [];
const run = (machine: string) => async () => {
  const r = await callTool(client, 'exec', { machine, argv: ['true'] });
  if (!r.ok) throw new Error(`exec failed: ${JSON.stringify(r.error)}`);
};
// warm-up: JIT, SQLite page cache, socket buffers, the agent's launcher
for (let i = 0; i < 20; i++) {
  await run('bench')();
  await run('bench-inproc')();
  await listMachines();
  await readSmall();
}
for (let i = 0; i < N; i++) {
  mcp.push(await time(run('bench')));
  mcpInProcess.push(await time(run('bench-inproc')));
  direct.push(await time(spawnTrue));
  mcpList.push(await time(listMachines));
  mcpRead.push(await time(readSmall));
  if (sshd) sshMaster.push(await time(() => execFileAsync('ssh', [...viaMaster, 'true'])));
  if (sshd && i % SSH_EVERY === 0) ssh.push(await time(() => execFileAsync('ssh', [...sshd.sshArgs(), 'true'])));
}

const directRow = summary('node spawn("true")', direct);
const rows = [
  summary('MCP exec via gateway+agent', mcp),
  summary('MCP exec, agent spawning in-process (launcher off)', mcpInProcess),
  summary('MCP read_file of a small file (gateway + agent, no process started)', mcpRead),
  summary('MCP machines_list (client + HTTP + gateway, no agent)', mcpList),
  directRow,
];
if (sshd) {
  rows.push(summary('ssh 127.0.0.1 true (reused ControlMaster connection)', sshMaster));
  rows.push(summary('ssh 127.0.0.1 true (new connection)', ssh));
}
const base = directRow.p50;
console.log(
  `\nexec latency, ${N} sequential calls (${new Date().toISOString()}, ${process.version}, load ${loadAverage()})`,
);
console.log('| what | n | p50 | p99 | p50 vs direct spawn |');
console.log('|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.name} | ${r.n} | ${fmtMs(r.p50)} | ${fmtMs(r.p99)} | ${(r.p50 / base).toFixed(2)}× |`);
if (!sshd) console.log('(ssh skipped: install openssh-server to compare)');

await client.close();
master?.kill('SIGTERM');
sshd?.stop();
await agent.dispose();
await agentInProcess.dispose();
await gw.dispose();
