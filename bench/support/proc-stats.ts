/** Process figures for the benchmarks, read from /proc (Linux). */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const CLOCK_TICKS = 100;

/** Resident set size of one process, KiB. */
export function rssKiB(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  if (!m?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

/**
 * Proportional set size of one process, KiB: its private pages plus its share of the pages it shares (the Node
 * binary's text with every other node process, an agent's with its launcher). RSS counts shared pages in full in
 * each process; PSS is what the machine pays (summed over all processes it is the memory in use).
 */
export function pssKiB(pid: number): number {
  const m = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+) kB/m);
  if (!m?.[1]) throw new Error(`no Pss for pid ${pid}`);
  return Number(m[1]);
}

/**
 * User + system CPU time a process has used so far, seconds; with `children`, plus that of the children it has
 * waited for (the commands an exec launcher ran).
 */
export function cpuSeconds(pid: number, children = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const own = (f[11] ?? 0) + (f[12] ?? 0);
  return (own + (children ? (f[13] ?? 0) + (f[14] ?? 0) : 0)) / CLOCK_TICKS;
}

/** The soft limit on open descriptors of processes started from here. */
export function fdLimit(): number {
  return Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
}

/** The 1, 5 and 15 minute load averages, as RESULTS.md records them. */
export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** Gives the processes a moment to finish what they were doing (GC, log writes) before a reading. */
export function settle(ms = 3000): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A process and all its descendants (an agent and its exec launcher, say). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** RSS (KiB) and CPU seconds of a process tree, summed; processes that exit meanwhile are skipped. */
export function treeUsage(root: number): { rssKiB: number; cpuS: number } {
  let rss = 0;
  let cpu = 0;
  for (const pid of processTree(root)) {
    try {
      rss += rssKiB(pid);
      cpu += cpuSeconds(pid, true);
    } catch {
      // exited between the listing and the read
    }
  }
  return { rssKiB: rss, cpuS: cpu };
}
