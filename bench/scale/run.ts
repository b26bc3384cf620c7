/**
 * bench/scale: how many idle machines one gateway holds, and what each costs. Enrolls N simulated agents with real
 * join tokens and connects them over the real protocol (bench/support/sim-agents.ts) to one real gateway process,
 * then prints the gateway's RSS growth and idle CPU per agent, the time until all are online, and machines_list
 * latency through the real MCP SDK client at that size. The last line is exactly
 * `scale: N agents, X KiB per agent, all online in S s` (X: RSS growth per agent).
 *
 * RSS alone mixes what the agents' objects hold with V8's headroom (heap it grew and has not given back), so the
 * gateway also reports, through heap-preload.mjs, its live heap after a full GC before and after the fleet
 * connects, and its RSS right after that GC: the live heap per agent is what each socket's objects really cost.
 *
 *   npx tsx bench/scale/run.ts [--quick] [--agents N] [--concurrency C]
 *
 * The process file limit bounds N here: every agent is one socket (one descriptor) in the gateway and one in this
 * generator, and `ulimit -Hn` on this machine is 20,000. N defaults to what fits (limit − 500).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { callTool, mcpClient } from '../../test/support/letkite';
import { removeDir, tempDir } from '../../test/support/processes';
import { cpuSeconds, fdLimit, loadAverage, rssKiB, settle } from '../support/proc-stats';
import { SimFleet } from '../support/sim-agents';
import { fmtMs, summary } from '../support/stats';
import { enrollFleet, heapReading, startScaleGateway } from './scale-gateway';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    agents: { type: 'string' },
    concurrency: { type: 'string', default: '200' },
  },
});
const limit = fdLimit();
const N = Number(values.agents ?? (values.quick ? 2_000 : limit - 500));
if (N > limit - 100) throw new Error(`${N} agents need ${N} descriptors per process; the limit here is ${limit}`);
const concurrency = Number(values.concurrency);

const heapDir = tempDir('scale-heap');
const scale = await startScaleGateway(join(heapDir, 'gw'));
const gw = scale.gateway;
const gatewayPid = scale.pid;
const client = await mcpClient(gw.url, await gw.apiToken('bench'));
type ListPage = { machines: { online: boolean }[]; next_cursor: string | null };
const listPage = async (args: Record<string, unknown> = {}) => {
  const r = await callTool<ListPage>(client, 'machines_list', args);
  if (!r.ok) throw new Error(`machines_list failed: ${JSON.stringify(r.error)}`);
  return r.data;
};
/** Every machine, following next_cursor (pages of 1,000, the maximum). */
const listMachines = async () => {
  const all: ListPage['machines'] = [];
  let cursor: string | null = null;
  do {
    const p = await listPage({ limit: 1000, ...(cursor ? { cursor } : {}) });
    all.push(...p.machines);
    cursor = p.next_cursor;
  } while (cursor !== null);
  return all;
};
await listMachines();

const tEnroll = performance.now();
const machines = await enrollFleet(gw, N);
const enrollS = (performance.now() - tEnroll) / 1000;

await settle();
const rssBefore = rssKiB(gatewayPid);
const heapBefore = await heapReading(scale, 1);
const rssBeforeGc = rssKiB(gatewayPid);

const fleet = new SimFleet(SimFleet.wsUrlOf(gw.url), machines);
const tConnect = performance.now();
const cpuConnect0 = cpuSeconds(gatewayPid);
await fleet.connectAll(concurrency);
const onlineS = (performance.now() - tConnect) / 1000;
const cpuConnect = cpuSeconds(gatewayPid) - cpuConnect0;

// The gateway's own view: every machine online.
const seen = await listMachines();
const seenOnline = seen.filter((m) => m.online).length;

await settle();
const rssAfter = rssKiB(gatewayPid);
const idleWindowS = values.quick ? 10 : 30;
const cpuIdle0 = cpuSeconds(gatewayPid);
await new Promise((r) => setTimeout(r, idleWindowS * 1000));
const cpuIdle = cpuSeconds(gatewayPid) - cpuIdle0;
// After the idle window (a GC forced inside it would count as idle CPU).
const heapAfter = await heapReading(scale, 2);
const rssAfterGc = rssKiB(gatewayPid);

// What an AI client pays per call (the first page, default size), and what reading the whole fleet costs.
const listTimes: number[] = [];
const walkTimes: number[] = [];
for (let i = 0; i < 20; i++) {
  let t = performance.now();
  await listPage();
  listTimes.push(performance.now() - t);
  t = performance.now();
  await listMachines();
  walkTimes.push(performance.now() - t);
}
const list = summary('machines_list', listTimes);
const listWalk = summary('machines_list, every page', walkTimes);
const perAgentKiB = (rssAfter - rssBefore) / N;
const liveHeapKiB = (heapAfter.usage.heapUsed - heapBefore.usage.heapUsed) / 1024 / N;
const rssGcKiB = (rssAfterGc - rssBeforeGc) / N;
const MiB = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

console.log(
  `\nscale, ${N} simulated agents on one gateway (${new Date().toISOString()}, ${process.version}, load ${loadAverage()})`,
);
console.log('| what | figure |');
console.log('|---|---|');
console.log(`| enrolled (16 in flight) | ${N} in ${enrollS.toFixed(1)} s |`);
console.log(
  `| connected (${concurrency} handshakes in flight) | all ${N} in ${onlineS.toFixed(1)} s (${fleet.failures} failed attempts, retried) |`,
);
console.log(`| online as the gateway sees it | ${seenOnline} of ${seen.length} machines |`);
console.log(`| gateway RSS before → after | ${(rssBefore / 1024).toFixed(1)} → ${(rssAfter / 1024).toFixed(1)} MiB |`);
console.log(`| gateway RSS per agent | ${perAgentKiB.toFixed(1)} KiB |`);
console.log(
  `| gateway live JS heap after a full GC, before → after | ${MiB(heapBefore.usage.heapUsed)} → ${MiB(heapAfter.usage.heapUsed)} MiB: ${liveHeapKiB.toFixed(1)} KiB per agent |`,
);
console.log(
  `| gateway RSS right after that GC, before → after | ${(rssBeforeGc / 1024).toFixed(1)} → ${(rssAfterGc / 1024).toFixed(1)} MiB: ${rssGcKiB.toFixed(1)} KiB per agent, of which ${(rssGcKiB - liveHeapKiB).toFixed(1)} not live JS heap (native sockets, V8 and malloc headroom) |`,
);
console.log(`| gateway CPU per handshake | ${((cpuConnect / N) * 1e6).toFixed(0)} µs |`);
console.log(
  `| gateway idle CPU (heartbeats, ${idleWindowS} s window) | ${((cpuIdle / idleWindowS) * 100).toFixed(2)} % of a core, ${((cpuIdle / idleWindowS / N) * 1e6).toFixed(2)} µs/s per agent |`,
);
console.log(
  `| machines_list at this size (${N + 0} machines), first page (100) | p50 ${fmtMs(list.p50)}, p99 ${fmtMs(list.p99)} |`,
);
console.log(`| machines_list, all ${N} in pages of 1,000 | p50 ${fmtMs(listWalk.p50)}, p99 ${fmtMs(listWalk.p99)} |`);
if (fleet.failureReasons.size)
  console.log(`failed attempts by reason: ${JSON.stringify(Object.fromEntries(fleet.failureReasons))}`);
console.log(`scale: ${N} agents, ${perAgentKiB.toFixed(1)} KiB per agent, all online in ${onlineS.toFixed(1)} s`);

fleet.stop();
await client.close();
await gw.dispose();
removeDir(heapDir);
