/**
 * What a process costs, read from /proc (Linux): CPU time, and resident memory sampled while something runs.
 * The transfer bench reports CPU seconds per GiB beside MB/s because on a shared 2-core machine the wall clock
 * mostly measures the other sessions, while the CPU a copy burns is what decides how fast it can go at all.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** utime, stime, cutime, cstime of `pid` in seconds (children count once they have been waited for). */
function times(pid: number | 'self'): { own: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which sits in parentheses and may itself hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (n: number) => Number(fields[n - 3]) / ticksPerSecond;
  return { own: field(14) + field(15), children: field(16) + field(17) };
}

/** CPU seconds `pid` has used so far (its own threads: the main thread, the thread pool, V8's helpers). */
export function cpuSeconds(pid: number): number {
  return times(pid).own;
}

/** CPU seconds used so far by the children `pid` (or this process) has waited for. */
export function childrenCpuSeconds(pid: number | 'self'): number {
  return times(pid).children;
}

/** Resident set size of `pid` in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}

/**
 * The process whose command line holds `needle` (e.g. the private sshd's config path), or undefined. A substring
 * match, since sshd rewrites its command line into one string ("sshd: /usr/sbin/sshd -D -f … [listener] …").
 */
export function findProcess(needle: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) return Number(name);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

/** Samples `pid`'s RSS every `everyMs` until stopped; answers the peak. */
export function sampleRss(pid: number, everyMs = 20): { stop: () => number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssBytes(pid));
    },
  };
}
