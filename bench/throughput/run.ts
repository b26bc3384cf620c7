/**
 * bench/throughput: calls per second through a real gateway and agent with N MCP clients (one session each) × M
 * calls in flight per client, for `exec true` and for two light tools (`machines_list`, a small `read_file`). For
 * each cell: calls/s, p50, p99, errors, and the gateway's and the agent's CPU (share of one core) and RSS.
 *
 *   npx tsx bench/throughput/run.ts [--quick] [--seconds S] [--shapes 1x1,4x1,16x1,1x16] [--tools exec,machines_list,read_file]
 *                                   [--profile DIR]
 *
 * `--profile DIR` writes the gateway's CPU profile (DIR/<pid>.cpuprofile, for Chrome DevTools or speedscope) when
 * the bench stops it (cpu-profile-preload.mjs).
 *
 * 1×16 is one session with 16 calls in flight: whether one MCP session runs calls concurrently or queues them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, FULL_SHELL_CEILING, mcpClient, TestGateway } from '../../test/support/letkite';
import { tempDir } from '../../test/support/processes';
import { loadAverage, settle, treeUsage } from '../support/proc-stats';
import { fmtMs, percentile } from '../support/stats';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seconds: { type: 'string' },
    shapes: { type: 'string', default: '1x1,4x1,16x1,1x16' },
    tools: { type: 'string', default: 'exec,machines_list,read_file' },
    profile: { type: 'string' },
  },
});
const seconds = Number(values.seconds ?? (values.quick ? 3 : 20));
const shapes = values.shapes.split(',').map((s) => {
  const [clients, inFlight] = s.split('x').map(Number);
  if (!clients || !inFlight) throw new Error(`bad shape "${s}" (want CLIENTSxINFLIGHT)`);
  return { clients, inFlight };
});

const dir = tempDir('throughput');
const smallFile = join(dir, 'small.txt');
writeFileSync(smallFile, 'a small file\n'.repeat(20));
const calls: Record<string, { tool: string; args: Record<string, unknown> }> = {
  exec: { tool: 'exec', args: { machine: 'bench', argv: ['true'] } },
  machines_list: { tool: 'machines_list', args: {} },
  read_file: { tool: 'read_file', args: { machine: 'bench', path: smallFile } },
};
const toolNames = values.tools.split(',');
for (const t of toolNames) if (!calls[t]) throw new Error(`unknown tool "${t}"`);

const profileEnv: Record<string, string> = values.profile
  ? {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${join(import.meta.dirname, 'cpu-profile-preload.mjs')}`,
      LETKITE_CPU_PROFILE_DIR: values.profile,
    }
  : {};
const gw = await TestGateway.start(profileEnv);
const agent = await gw.addAgent('bench', { ceiling: FULL_SHELL_CEILING });
const gatewayPid = gw.process?.child.pid;
const agentPid = agent.process?.child.pid;
if (!gatewayPid || !agentPid) throw new Error('no gateway or agent pid');
const token = await gw.apiToken('bench');
const maxClients = Math.max(...shapes.map((s) => s.clients));
const clients: Client[] = [];
for (let i = 0; i < maxClients; i++) clients.push(await mcpClient(gw.url, token));

interface Cell {
  tool: string;
  shape: string;
  calls: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  gatewayCpu: number;
  agentCpu: number;
  gatewayRssMiB: number;
  agentRssMiB: number;
}

async function runCell(name: string, clientCount: number, inFlight: number): Promise<Cell> {
  const { tool, args } = calls[name] as (typeof calls)[string];
  // warm-up on every client
  await Promise.all(clients.slice(0, clientCount).map((c) => callTool(c, tool, args)));
  const latencies: number[] = [];
  let errors = 0;
  const g0 = treeUsage(gatewayPid as number);
  const a0 = treeUsage(agentPid as number);
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const loop = async (c: Client) => {
    while (performance.now() < until) {
      const t = performance.now();
      const r = await callTool(c, tool, args).catch(() => ({ ok: false }));
      latencies.push(performance.now() - t);
      if (!r.ok) errors++;
    }
  };
  const loops: Promise<void>[] = [];
  for (const c of clients.slice(0, clientCount)) for (let j = 0; j < inFlight; j++) loops.push(loop(c));
  await Promise.all(loops);
  const wall = (performance.now() - t0) / 1000;
  const g1 = treeUsage(gatewayPid as number);
  const a1 = treeUsage(agentPid as number);
  return {
    tool: name,
    shape: `${clientCount}×${inFlight}`,
    calls: latencies.length,
    errors,
    perSecond: latencies.length / wall,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    gatewayCpu: (g1.cpuS - g0.cpuS) / wall,
    agentCpu: (a1.cpuS - a0.cpuS) / wall,
    gatewayRssMiB: g1.rssKiB / 1024,
    agentRssMiB: a1.rssKiB / 1024,
  };
}

const cells: Cell[] = [];
for (const name of toolNames) {
  for (const s of shapes) {
    cells.push(await runCell(name, s.clients, s.inFlight));
    await settle(1000);
  }
}

console.log(
  `\nthroughput, ${seconds} s per cell (${new Date().toISOString()}, ${process.version}, load ${loadAverage()})`,
);
console.log(
  '| tool | clients × in flight | calls/s | p50 | p99 | errors | gateway CPU | gateway CPU per call | agent CPU | gateway RSS | agent RSS |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const c of cells) {
  console.log(
    `| ${c.tool} | ${c.shape} | ${c.perSecond.toFixed(0)} | ${fmtMs(c.p50)} | ${fmtMs(c.p99)} | ${c.errors} | ${(c.gatewayCpu * 100).toFixed(0)} % | ${((c.gatewayCpu / c.perSecond) * 1000).toFixed(2)} ms | ${(c.agentCpu * 100).toFixed(0)} % | ${c.gatewayRssMiB.toFixed(0)} MiB | ${c.agentRssMiB.toFixed(0)} MiB |`,
  );
}
// One session, 16 in flight vs 16 sessions, 1 each: near 1 means a session's calls run concurrently.
for (const name of toolNames) {
  const one = cells.find((c) => c.tool === name && c.shape === '1×16');
  const many = cells.find((c) => c.tool === name && c.shape === '16×1');
  if (one && many)
    console.log(
      `${name}: one session with 16 in flight serves ${(one.perSecond / many.perSecond).toFixed(2)}× what 16 sessions do`,
    );
}

for (const c of clients) await c.close();
await agent.dispose();
await gw.dispose();
