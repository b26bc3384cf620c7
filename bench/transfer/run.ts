/**
 * bench/transfer: throughput of `copy_between_hosts` between two real agents through a real gateway, against
 * `scp` through a private sshd on 127.0.0.1 — same files, alternating, in one run, so machine noise hits both
 * alike. Prints the median MB/s per size and the ratio, the CPU seconds each side burns per GiB (gateway and both
 * agents against scp, ssh and sshd), and the gateway's resident memory before and during the copies; with
 * --record, appends the table to bench/RESULTS.md.
 *
 *   npx tsx bench/transfer/run.ts [--quick] [--record] [--sizes=64,256,1024] [--cpu-prof=DIR] [rounds]
 *
 * --quick: 64 and 256 MiB, one round each (about a minute); the goal sizes (256 MiB, 1 GiB) want the full run.
 *
 * --sizes picks the file sizes (MiB); --cpu-prof=DIR has the gateway and agent processes write V8 CPU profiles
 * to DIR (through NODE_OPTIONS, so it touches nothing else).
 */
import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { callTool, FULL_SHELL_CEILING, mcpClient, TestGateway } from '../../test/support/letkite';
import { freePort, removeDir, repoRoot, tempDir } from '../../test/support/processes';
import { LocalSshd } from '../support/sshd';
import { percentile } from '../support/stats';
import { childrenCpuSeconds, cpuSeconds, findProcess, rssBytes, sampleRss } from './proc-usage';

const execFileAsync = promisify(execFile);
const record = process.argv.includes('--record');
const quick = process.argv.includes('--quick');
const rounds = Number(process.argv.filter((a) => !a.startsWith('--'))[2] ?? (quick ? 1 : 3));
const MiB = 1024 * 1024;
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const sizes = (option('sizes') ?? (quick ? '64,256' : '64,256,1024')).split(',').map((s) => Number(s) * MiB);
const profileDir = option('cpu-prof');
if (profileDir) {
  // Node 20 refuses --cpu-prof in NODE_OPTIONS; a preload starts the profiler through the inspector instead.
  process.env.LETKITE_CPU_PROFILE_DIR = resolve(profileDir);
  mkdirSync(resolve(profileDir), { recursive: true });
  const preload = join(repoRoot, 'bench/transfer/cpu-profile.cjs');
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim();
}

if (!LocalSshd.available()) throw new Error('bench/transfer needs openssh-server (/usr/sbin/sshd) to compare with');

const srcDir = tempDir('bench-xfer-src');
const dstDir = tempDir('bench-xfer-dst');
// The files are made before anything starts: writing a GiB of random data blocks this process for seconds, long
// enough for the gateway to drop the MCP client's idle keep-alive connection under it (fetch failed: other side
// closed on the next call).
for (const size of sizes) {
  execFileSync('sh', ['-c', `head -c ${size} /dev/urandom > '${join(srcDir, `f-${size}`)}'`]);
}
const ceiling = `${FULL_SHELL_CEILING}transfers = true\n`;
const gw = await TestGateway.start();
const from = await gw.addAgent('from', { ceiling });
const to = await gw.addAgent('to', { ceiling });
const client = await mcpClient(gw.url, await gw.apiToken('bench'));
const sshd = new LocalSshd(tempDir('bench-xfer-sshd'), await freePort());
await sshd.start();

function pidOf(p: { process: { child: { pid?: number } } | null }, what: string): number {
  const pid = p.process?.child.pid;
  if (pid === undefined) throw new Error(`no process for ${what}`);
  return pid;
}
const gatewayPid = pidOf(gw, 'the gateway');
const letkitePids = [gatewayPid, pidOf(from, 'the source agent'), pidOf(to, 'the destination agent')];
// scp's costs: scp and its ssh are this process's children; the server side (sshd's per-connection processes and
// the remote scp) are the private sshd's, counted once it has waited for them.
const sshdPid = findProcess(join(sshd.dir, 'sshd_config'));
if (sshdPid === undefined) throw new Error('cannot find the private sshd process');
const letkiteCpu = () => letkitePids.map(cpuSeconds);
const scpCpu = () => childrenCpuSeconds('self') + childrenCpuSeconds(sshdPid);

function scpArgs(source: string, destination: string): string[] {
  return [
    '-q',
    '-i',
    sshd.clientKey,
    '-P',
    String(sshd.port),
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'LogLevel=ERROR',
    '-o',
    'BatchMode=yes',
    `${userInfo().username}@127.0.0.1:${source}`,
    destination,
  ];
}

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

interface Row {
  size: number;
  letkite: number;
  scp: number;
  /** CPU seconds per GiB: gateway, source agent, destination agent; and scp (both ends, all processes). */
  letkiteCpu: number[];
  scpCpu: number;
  /** The gateway's RSS before this size's first copy, and its peak during this size's copies. */
  gatewayRss: { idle: number; peak: number };
}
const rows: Row[] = [];
for (const size of sizes) {
  const file = join(srcDir, `f-${size}`);
  const letkite: number[] = [];
  const scp: number[] = [];
  const copyTarget = join(dstDir, 'letkite-copy');
  const scpTarget = join(dstDir, 'scp-copy');
  const viaLetKite = async () => {
    const r = await callTool(
      client,
      'copy_between_hosts',
      { source: { machine: 'from', path: file }, destination: { machine: 'to', path: copyTarget }, overwrite: true },
      { timeout: 600_000 },
    );
    if (!r.ok) throw new Error(`copy failed: ${JSON.stringify(r.error)}`);
  };
  const viaScp = () => execFileAsync('scp', scpArgs(file, scpTarget));
  const gatewayIdle = rssBytes(gatewayPid);
  const gatewayRss = sampleRss(gatewayPid);
  await viaLetKite(); // warm-up: JIT, page cache of the source file
  await viaScp();
  const letkiteSpent = [0, 0, 0];
  let scpSpent = 0;
  for (let i = 0; i < rounds; i++) {
    // Alternate which goes first, so neither always gets the warmer cache.
    const order = i % 2 === 0 ? [viaLetKite, viaScp] : [viaScp, viaLetKite];
    for (const run of order) {
      const cpuBefore = run === viaLetKite ? letkiteCpu() : [scpCpu()];
      const s = await seconds(run);
      if (run === viaLetKite) {
        letkite.push(size / 1e6 / s);
        letkiteCpu().forEach((v, k) => {
          letkiteSpent[k] = (letkiteSpent[k] ?? 0) + v - (cpuBefore[k] ?? 0);
        });
      } else {
        scp.push(size / 1e6 / s);
        // The server's processes are counted once sshd has waited for them, a moment after scp returns.
        await new Promise((r) => setTimeout(r, 200));
        scpSpent += scpCpu() - (cpuBefore[0] ?? 0);
      }
    }
    rmSync(copyTarget, { force: true });
    rmSync(scpTarget, { force: true });
  }
  rmSync(file, { force: true });
  const gib = (rounds * size) / (1024 * MiB);
  rows.push({
    size,
    letkite: percentile(letkite, 50),
    scp: percentile(scp, 50),
    letkiteCpu: letkiteSpent.map((v) => v / gib),
    scpCpu: scpSpent / gib,
    gatewayRss: { idle: gatewayIdle, peak: gatewayRss.stop() },
  });
  console.error(
    `${size / MiB} MiB: letkite ${letkite.map((v) => v.toFixed(0)).join(' ')}; scp ${scp.map((v) => v.toFixed(0)).join(' ')} MB/s`,
  );
}
const cpuCell = (v: number) => `${v.toFixed(2)} s`;
const mib = (v: number) => `${(v / MiB).toFixed(0)} MiB`;

const load = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
const lines = [
  '',
  `## transfer throughput — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `copy_between_hosts (agent → gateway → agent) vs scp via a private sshd on 127.0.0.1, same random files,`,
  `alternating, median of ${rounds} rounds each; ${process.version}, ${execFileSync('nproc', { encoding: 'utf8' }).trim()} cores, load average ${load} at the end.`,
  'Both sides write to the page cache; LetKite also fsyncs the copy before its atomic rename.',
  'CPU is seconds per GiB copied (user + system, every thread): LetKite as gateway + source + destination agent,',
  "scp as both ends' scp, ssh and sshd processes. Gateway RSS: before the size's first copy → peak during them.",
  '',
  '| size | copy_between_hosts | scp | ratio | CPU/GiB LetKite (gw + src + dst) | CPU/GiB scp | gateway RSS |',
  '|---|---|---|---|---|---|---|',
  ...rows.map((r) => {
    const cpu = r.letkiteCpu.reduce((a, b) => a + b, 0);
    return [
      `| ${r.size / MiB} MiB | ${r.letkite.toFixed(0)} MB/s | ${r.scp.toFixed(0)} MB/s | ${(r.letkite / r.scp).toFixed(2)}×`,
      `${cpuCell(cpu)} (${r.letkiteCpu.map(cpuCell).join(' + ')})`,
      cpuCell(r.scpCpu),
      `${mib(r.gatewayRss.idle)} → ${mib(r.gatewayRss.peak)} |`,
    ].join(' | ');
  }),
  '',
];
console.log(lines.join('\n'));
if (record) appendFileSync(join(repoRoot, 'bench/RESULTS.md'), lines.join('\n'));

await client.close();
sshd.stop();
await from.dispose();
await to.dispose();
await gw.dispose();
removeDir(srcDir);
removeDir(dstDir);
removeDir(sshd.dir);
