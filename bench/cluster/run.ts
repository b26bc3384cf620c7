/**
 * bench/cluster: cluster mode (docs/design/cluster.md). Two gateway processes on one fresh PostgreSQL database and
 * NATS; agent `on-a` is held by gateway A. Part 1: sequential MCP `exec` of `true` on `on-a`, alternating a client
 * of A (same gateway) and a client of B (routed over NATS), so machine noise hits both alike: p50/p99 and what
 * routing adds. Part 2: routed calls/s with 16 clients spread over the two gateways, for a fixed time, all on
 * `on-a` (half of them cross gateways). Goal (issue #12): routing adds under 1 ms at p50.
 *
 *   npx tsx bench/cluster/run.ts [N | --quick]      (PostgreSQL on 127.0.0.1:5432, NATS on 127.0.0.1:4222)
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TestCluster } from '../../test/support/cluster';
import { callTool, machineOnline, mcpClient, TestGateway } from '../../test/support/letkite';
import { removeDir } from '../../test/support/processes';
import { loadAverage } from '../support/proc-stats';
import { fmtMs, summary } from '../support/stats';

const quick = process.argv[2] === '--quick';
const N = quick ? 60 : Number(process.argv[2] ?? 300);
const CLIENTS = 16;
const THROUGHPUT_MS = quick ? 5_000 : 20_000;

const cluster = await TestCluster.create('letkite_bench_cluster');
const a = await TestGateway.start({ ...cluster.env, LETKITE_GATEWAY_ID: 'bench-a' });
const b = await TestGateway.start({ ...cluster.env, LETKITE_GATEWAY_ID: 'bench-b' });
const agent = await a.addAgent('on-a');
const token = await a.apiToken('bench');
const viaA = await mcpClient(a.url, token);
const viaB = await mcpClient(b.url, token);
await machineOnline(viaB, 'on-a');

const exec = async (client: Client) => {
  const r = await callTool(client, 'exec', { machine: 'on-a', argv: ['true'] });
  if (!r.ok) throw new Error(`exec failed: ${JSON.stringify(r.error)}`);
};
const time = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

// Warm-up: JIT, the pools, NATS subscriptions, the agent's launcher.
for (let i = 0; i < 20; i++) {
  await exec(viaA);
  await exec(viaB);
}
const same: number[] = [];
const routed: number[] = [];
for (let i = 0; i < N; i++) {
  same.push(await time(() => exec(viaA)));
  routed.push(await time(() => exec(viaB)));
}

// Routed calls/s: 16 clients, half on each gateway, each calling back to back until the time is up.
const clients: Client[] = [];
for (let i = 0; i < CLIENTS; i++) clients.push(await mcpClient(i % 2 ? b.url : a.url, token));
let calls = 0;
let crossed = 0;
const until = Date.now() + THROUGHPUT_MS;
const started = performance.now();
await Promise.all(
  clients.map(async (client, i) => {
    while (Date.now() < until) {
      await exec(client);
      calls += 1;
      if (i % 2) crossed += 1;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;

const sameRow = summary('exec on A for a machine A holds (no routing)', same);
const routedRow = summary('exec on B for a machine A holds (routed over NATS)', routed);
console.log(
  `\ncluster routing, ${N} sequential calls each (${new Date().toISOString()}, ${process.version}, load ${loadAverage()})`,
);
console.log('| what | n | p50 | p99 |');
console.log('|---|---|---|---|');
for (const r of [sameRow, routedRow]) console.log(`| ${r.name} | ${r.n} | ${fmtMs(r.p50)} | ${fmtMs(r.p99)} |`);
console.log(
  `routing adds ${fmtMs(routedRow.p50 - sameRow.p50)} at p50 and ${fmtMs(routedRow.p99 - sameRow.p99)} at p99 (goal: < 1 ms at p50)`,
);
console.log(
  `throughput: ${CLIENTS} clients over two gateways, ${(calls / seconds).toFixed(0)} calls/s for ${seconds.toFixed(1)} s (${crossed} of ${calls} routed)`,
);

for (const c of [viaA, viaB, ...clients]) await c.close();
await agent.dispose();
await a.dispose();
await b.dispose();
await cluster.dispose();
removeDir(cluster.dataDir);
