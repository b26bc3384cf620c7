/**
 * bench/spawn: where an exec's spawn time goes, in one run (alternating rounds, so machine noise hits all alike).
 * Each row runs `true` N times, sequentially, from a separate process of the kind named:
 *
 *   - the agent's exec launcher (native/letkite-launch.c, a ~1 MiB static process) driven from this process
 *     through LauncherClient, as the agent drives it: fork + exec, piped stdio, the round trip over its protocol;
 *   - a bare `node` (the size of the former Node launcher) with Node's spawn and piped stdio;
 *   - the same with a 300 MiB heap held (about an agent's RSS): what spawning in the agent costs (fork copies the
 *     page tables of the parent);
 *   - the bare `node` spawning the Landlock helper (`letkite-sandbox … -- true`): the helper's own set-up;
 *   - python3's os.posix_spawn (glibc: clone(CLONE_VM|CLONE_VFORK), no page-table copy) with no pipes: a floor.
 *
 *   npx tsx bench/spawn/run.ts [N | --quick]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Launch, LauncherClient } from '../../apps/agent/src/executors/launcher-client';
import { loadAverage, rssKiB } from '../support/proc-stats';

const N = process.argv[2] === '--quick' ? 100 : Number(process.argv[2] ?? 300);
const ROUNDS = 5;
const helper = fileURLToPath(new URL('../../apps/agent/native/build/letkite-sandbox', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'letkite-bench-spawn-'));

// Prints the per-call times (ms, one per line) of n sequential spawns of argv, from a fresh node process.
const nodeLoop = (ballastMiB: number) => `
const { spawn } = require('node:child_process');
const ballast = [];
for (let i = 0; i < ${ballastMiB}; i++) ballast.push(Buffer.alloc(1 << 20, 1));
const [file, ...args] = JSON.parse(process.argv[1]);
const n = Number(process.argv[2]);
const run = () => new Promise((res) => {
  const c = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, cwd: '/', env: { PATH: '/usr/bin:/bin' } });
  c.stdin.end();
  c.stdout.resume(); c.stderr.resume();
  c.on('close', (code) => res(code));
});
(async () => {
  const out = [];
  let code = 0;
  for (let i = 0; i < 5; i++) await run();
  for (let i = 0; i < n; i++) { const t = performance.now(); code = await run(); out.push(performance.now() - t); }
  process.stdout.write(JSON.stringify({ times: out, code, rssMiB: process.memoryUsage().rss / 1048576 }));
})();`;

const pyLoop = `
import os, sys, time, json
n = int(sys.argv[1])
def run():
    pid = os.posix_spawn('/usr/bin/true', ['true'], {'PATH': '/usr/bin:/bin'})
    os.waitpid(pid, 0)
for _ in range(5): run()
out = []
for _ in range(n):
    t = time.perf_counter(); run(); out.append((time.perf_counter() - t) * 1000)
sys.stdout.write(json.dumps({'times': out, 'code': 0, 'rssMiB': 0}))
`;

interface Row {
  name: string;
  run: (
    n: number,
  ) => { times: number[]; code: number; rssMiB: number } | Promise<{ times: number[]; code: number; rssMiB: number }>;
}

// The C launcher, kept for the whole run (idle retirement off), as an agent keeps it while commands come.
const launcher = new LauncherClient(undefined, (m) => console.error(m), 0);
const launch: Launch | null = await launcher.acquire();
if (!launch) throw new Error('the C launcher did not start: build it with `npm run build -w @letkite/agent`');
const launchTrue = () =>
  new Promise<number>((resolve, reject) =>
    launch(
      { file: 'true', args: [], cwd: '/', env: { PATH: '/usr/bin:/bin' }, extraFds: [], stdin: undefined, max: 1024 },
      {
        pid: () => {},
        error: (code) => reject(new Error(code)),
        exit: () => {},
        close: (code) => resolve(code ?? -1),
        fail: reject,
      },
    ),
  );
async function viaLauncher(n: number) {
  for (let i = 0; i < 5; i++) await launchTrue();
  const times: number[] = [];
  let code = 0;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    code = await launchTrue();
    times.push(performance.now() - t);
  }
  return { times, code, rssMiB: rssKiB(launcher.pid ?? 0) / 1024 };
}
const viaNode =
  (ballast: number, argv: string[]) =>
  (n: number): { times: number[]; code: number; rssMiB: number } =>
    JSON.parse(
      execFileSync(process.execPath, ['-e', nodeLoop(ballast), JSON.stringify(argv), String(n)], {
        encoding: 'utf8',
        maxBuffer: 1 << 24,
      }),
    );
const helperArgv = [
  helper,
  '--ro',
  '/usr',
  '--ro',
  '/lib',
  '--ro',
  '/bin',
  '--tmp',
  tmp,
  '--tcp',
  'none',
  '--',
  'true',
];
const rows: Row[] = [
  { name: 'the C launcher (letkite-launch), "true", piped stdio, from the agent\'s side', run: viaLauncher },
  { name: 'bare node, spawn("true"), piped stdio (the former Node launcher)', run: viaNode(0, ['true']) },
  { name: 'node holding 300 MiB, spawn("true") (spawning in the agent)', run: viaNode(300, ['true']) },
  { name: 'bare node, spawn(letkite-sandbox … -- true) (sandboxed exec)', run: viaNode(0, helperArgv) },
  {
    name: 'python3 os.posix_spawn("true"), no pipes (a small vfork launcher)',
    run: (n) => JSON.parse(execFileSync('python3', ['-c', pyLoop, String(n)], { encoding: 'utf8' })),
  },
];

const all = rows.map(() => [] as number[]);
const codes = rows.map(() => 0);
const rss = rows.map(() => 0);
for (let r = 0; r < ROUNDS; r++) {
  for (const [i, row] of rows.entries()) {
    const res = await row.run(Math.ceil(N / ROUNDS));
    all[i]?.push(...res.times);
    codes[i] = res.code;
    rss[i] = res.rssMiB;
  }
}
launcher.stop();
const p = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};
// The ratio is against a bare node's spawn, the former launcher (row 2).
const base = p(all[1] ?? [], 0.5);
console.log(
  `\nspawn breakdown, ${N} spawns per row (${new Date().toISOString()}, ${process.version}, load ${loadAverage()})`,
);
console.log("| what | p50 | p99 | vs a bare node's spawn | exit code | spawner RSS |");
console.log('|---|---|---|---|---|---|');
rows.forEach((row, i) => {
  const xs = all[i] ?? [];
  console.log(
    `| ${row.name} | ${p(xs, 0.5).toFixed(2)} ms | ${p(xs, 0.99).toFixed(2)} ms | ${(p(xs, 0.5) / base).toFixed(2)}× | ${codes[i]} | ${rss[i] ? `${rss[i]?.toFixed(0)} MiB` : '—'} |`,
  );
});
console.log('(exit code 125 from the helper means it refused: no Landlock here; its time is then its refusal path)');
rmSync(tmp, { recursive: true, force: true });
