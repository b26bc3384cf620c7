/**
 * bench/scale/heap: where each idle agent's memory in the gateway goes. Starts a gateway with heap-preload.mjs,
 * connects a warm-up fleet (so code compiled on the first handshakes is not counted), takes a reading, connects N
 * more simulated agents, takes another, and prints the growth per agent of:
 *  - RSS, by kind of mapping (the malloc heap, anonymous mappings: V8's heap and malloc arenas, files);
 *  - the live JS heap after a full GC, and what V8 has committed for it (the difference is headroom);
 *  - with `--malloc`, glibc's bytes in use (malloc_stats through gdb): native memory the sockets hold;
 *  - with `--snapshot`, heap snapshots' growth by object kind. Writing a snapshot costs the gateway native memory
 *    it keeps, so RSS figures of a `--snapshot` run are not the fleet's.
 *
 *   npx tsx bench/scale/heap.ts [--agents N] [--warmup W] [--snapshot] [--malloc]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { removeDir, tempDir } from '../../test/support/processes';
import { loadAverage, rssKiB, settle } from '../support/proc-stats';
import { SimFleet } from '../support/sim-agents';
import { heapGrowth } from './heap-snapshot-diff';
import { enrollFleet, heapReading, startScaleGateway } from './scale-gateway';

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '3000' },
    warmup: { type: 'string', default: '200' },
    snapshot: { type: 'boolean', default: false },
    malloc: { type: 'boolean', default: false },
  },
});
const N = Number(values.agents);
const W = Number(values.warmup);

/** RSS (KiB) by kind of mapping, from /proc/PID/smaps. */
function rssByMapping(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let kind = 'anonymous (V8 heap, malloc arenas, stacks)';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = line.match(/^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/);
    if (head) {
      const path = head[1] ?? '';
      kind =
        path === ''
          ? 'anonymous (V8 heap, malloc arenas, stacks)'
          : path === '[heap]'
            ? 'malloc heap (brk)'
            : path.startsWith('[')
              ? path
              : 'files';
      continue;
    }
    const m = line.match(/^Rss:\s+(\d+) kB/);
    if (m) out[kind] = (out[kind] ?? 0) + Number(m[1]);
  }
  return out;
}

const dir = tempDir('heap');
const gw = await startScaleGateway(join(dir, 'gw'), { snapshots: values.snapshot });

/** glibc's bytes in use over all arenas, read through gdb (malloc_stats writes to the gateway's stderr). */
async function mallocInUse(): Promise<number> {
  const mark = gw.gateway.process?.stderr.length ?? 0;
  const g = spawnSync('gdb', ['-p', String(gw.pid), '-batch', '-ex', 'call (void)malloc_stats()'], {
    encoding: 'utf8',
  });
  if (g.status !== 0) throw new Error(`gdb failed: ${g.stderr}`);
  await settle(500);
  const text = gw.gateway.process?.stderr.slice(mark) ?? '';
  const m = [...text.matchAll(/^in use bytes\s*=\s*(\d+)/gm)].at(-1);
  if (!m?.[1]) throw new Error(`no malloc_stats in the gateway's output: ${text.slice(-500)}`);
  return Number(m[1]);
}

const machines = await enrollFleet(gw.gateway, W + N);
const wsUrl = SimFleet.wsUrlOf(gw.gateway.url);
const warm = new SimFleet(wsUrl, machines.slice(0, W));
await warm.connectAll(200);
await settle();
const rss0 = rssKiB(gw.pid);
const map0 = rssByMapping(gw.pid);
const h0 = await heapReading(gw, 1);
const m0 = values.malloc ? await mallocInUse() : 0;
const fleet = new SimFleet(wsUrl, machines.slice(W));
await fleet.connectAll(200);
await settle();
const rss1 = rssKiB(gw.pid);
const map1 = rssByMapping(gw.pid);
const h1 = await heapReading(gw, 2);
const m1 = values.malloc ? await mallocInUse() : 0;

const per = (bytes: number) => `${(bytes / 1024 / N).toFixed(2)} KiB`;
console.log(`\nmemory per agent, ${N} agents after ${W} warm-up (${new Date().toISOString()}, load ${loadAverage()})`);
console.log(`| what | per agent |`);
console.log('|---|---|');
console.log(
  `| RSS growth${values.snapshot ? ' (includes snapshot 1 leftovers)' : ''} | ${per((rss1 - rss0) * 1024)} |`,
);
for (const kind of Object.keys(map1))
  console.log(`| RSS growth: ${kind} | ${per(((map1[kind] ?? 0) - (map0[kind] ?? 0)) * 1024)} |`);
console.log(`| live JS heap after a full GC | ${per(h1.usage.heapUsed - h0.usage.heapUsed)} |`);
console.log(`| JS heap V8 has committed | ${per(h1.usage.heapTotal - h0.usage.heapTotal)} |`);
console.log(`| external (Buffers, ArrayBuffers) | ${per(h1.usage.external - h0.usage.external)} |`);
if (values.malloc) console.log(`| malloc in use (glibc, every arena) | ${per(m1 - m0)} |`);
if (values.snapshot) {
  const growth = heapGrowth(`${gw.heapOut}.1.heapsnapshot`, `${gw.heapOut}.2.heapsnapshot`, N);
  console.log(`\nheap snapshot growth ${(growth.total / 1024).toFixed(2)} KiB per agent, by kind:`);
  console.log('| kind | count per agent | bytes per agent |');
  console.log('|---|---|---|');
  for (const r of growth.rows.filter((r) => Math.abs(r.bytes) >= 8))
    console.log(`| ${r.kind} | ${r.count.toFixed(2)} | ${r.bytes.toFixed(0)} |`);
}

warm.stop();
fleet.stop();
await gw.gateway.dispose();
removeDir(dir);
