/**
 * bench/memory/attribute: where the built agent's idle memory goes (issue #13). Starts a built gateway and the
 * standalone agent bundle (dist/agent/letkite-agent.mjs run), runs one command through MCP, waits for the exec
 * launcher to exit, and prints for the agent process alone:
 *  - VmRSS and PSS, and RSS by mapping: the node binary's pages, other files, the malloc heap, anonymous mappings
 *    (V8's heap, wasm memory, thread stacks);
 *  - through the inspector (opened after the /proc readings, with SIGUSR1 on a port given at start):
 *    `process.memoryUsage()`, V8's heap spaces, and with `--snapshot` the heap snapshot's largest object kinds.
 *
 *   npx tsx bench/memory/attribute.ts [--snapshot | --snapshot-file PATH] [--commands N] [--idle-ms N]
 *                                     [--variant 'NAME=FLAGS' …] [--env K=V …] [--agent PATH] [--first-use]
 *
 * Each `--variant` is one agent run with those extra node flags and `K=V` environment variables (`base=` is the
 * agent as shipped; `BUNDLE=PATH` runs another bundle, a patched copy of dist/agent); variants run in
 * turn against one gateway, so their figures compare within one run. `--idle-ms N` waits N ms after the last
 * command (default 8000; the launcher exits after 2000). Environment variables for the agent go in `--env K=V`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, RUN_AS } from '../../test/support/letkite';
import { freePort, removeDir, repoRoot, tempDir, waitFor } from '../../test/support/processes';
import { loadAverage, processTree, pssKiB, rssKiB, settle } from '../support/proc-stats';

const argv = process.argv.slice(2);
const many = (flag: string): string[] =>
  argv.flatMap((a, i) => {
    const next = argv[i + 1];
    return a === flag && next !== undefined ? [next] : [];
  });
const one = (flag: string, fallback: string) => many(flag).at(-1) ?? fallback;
/** `--snapshot-file PATH`: the summary, and the raw snapshot written to PATH (DevTools' Memory tab opens it). */
const snapshotFile = one('--snapshot-file', '');
const snapshot = argv.includes('--snapshot') || snapshotFile !== '';
/**
 * `--malloc-trim`: after the readings, gdb calls glibc's malloc_stats() and malloc_trim(0) in the agent and the RSS
 * is read again: how much of the malloc heap is freed memory glibc kept (diagnosis only; needs gdb and ptrace).
 */
const mallocTrim = argv.includes('--malloc-trim');
/**
 * `--recreate N`: after the readings, N times: wait for the grammar to be let go (LETKITE_COMMAND_RULES_IDLE_MS
 * in the variant, plus 1 s), time one exec through MCP (it loads the grammar again), then one more (loaded): the
 * cost of re-creating the parser, end to end.
 */
const recreate = Number(one('--recreate', '0'));
/** `--show-output`: print what the agent wrote (with `--variant 'gc=--trace-gc'`, its GC log). */
const showOutput = argv.includes('--show-output');
/**
 * `--first-use`: after the readings, times the first and the second request of op groups the agent loads on first
 * use (list_dir: files; shell_run: sessions; job_status: jobs; terminal_open: terminals), then reads the RSS again.
 */
const firstUse = argv.includes('--first-use');
const commands = Number(one('--commands', '1'));
const idleMs = Number(one('--idle-ms', '8000'));
const variants = (many('--variant').length ? many('--variant') : ['base=']).map((v) => {
  const at = v.indexOf('=');
  const words = v
    .slice(at + 1)
    .split(' ')
    .filter(Boolean);
  // `K=V` words are environment variables for that agent (MALLOC_ARENA_MAX=2), the rest node flags.
  const isEnv = (w: string) => /^[A-Z_][A-Z0-9_]*=/.test(w);
  const env = Object.fromEntries(
    words.filter(isEnv).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );
  return { name: v.slice(0, at), flags: words.filter((w) => !isEnv(w)), env, words };
});
const extraEnv = Object.fromEntries(
  many('--env').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
);
const builtCli = join(repoRoot, 'dist/cli/main.mjs');
/** `--agent PATH`: another agent bundle (a patched copy of dist/agent, to try a build change). */
const builtAgent = one('--agent', join(repoRoot, 'dist/agent/letkite-agent.mjs'));
const MiB = 1024;

const build = spawnSync(process.execPath, ['tools/build/build.mjs', '--if-stale', '--keep-webapp'], {
  cwd: repoRoot,
  stdio: 'inherit',
});
if (build.status !== 0) throw new Error('the build failed');

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('LETKITE_') && k !== 'NODE_OPTIONS'),
);

function launch(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...cleanEnv, NO_COLOR: '1', ...env } });
  const p = { child, out: '' };
  child.stdout.on('data', (c: Buffer) => {
    p.out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    p.out += c.toString();
  });
  return p;
}

/** RSS and PSS (KiB) of one process by kind of mapping, from /proc/PID/smaps. */
function smapsByKind(pid: number): Record<string, { rss: number; pss: number }> {
  const out: Record<string, { rss: number; pss: number }> = {};
  let kind = 'anonymous';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = line.match(/^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/);
    if (head) {
      const [, from = '0', to = '0', perms = '', path = ''] = head;
      const virtualGiB = (Number.parseInt(to, 16) - Number.parseInt(from, 16)) / 2 ** 30;
      kind =
        path === ''
          ? // V8 reserves a wasm memory with guard regions around it: gigabytes of address space.
            virtualGiB >= 1
            ? 'anonymous: wasm memory'
            : 'anonymous: V8 heap, code, stacks, malloc arenas'
          : path === '[heap]'
            ? 'malloc heap'
            : path.endsWith('/node') || path.endsWith('/nodejs')
              ? `node binary (${perms})`
              : path.startsWith('[')
                ? path
                : `file ${path.split('/').pop()}`;
      out[kind] ??= { rss: 0, pss: 0 };
      continue;
    }
    const m = line.match(/^(Rss|Pss):\s+(\d+) kB/);
    const entry = out[kind];
    if (m && entry) entry[m[1] === 'Rss' ? 'rss' : 'pss'] += Number(m[2]);
  }
  return out;
}

/** Evaluates expressions in the agent through the inspector; the heap snapshot summary when asked. */
async function inspect(port: number, exprs: string[], takeSnapshot: boolean): Promise<string[]> {
  const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const url = list[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error('no inspector target');
  const ws = new WebSocket(url, { maxPayload: 1 << 30 });
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  let nextId = 1;
  const pending = new Map<number, (v: { result?: { result?: { value?: unknown } } }) => void>();
  const chunks: string[] = [];
  ws.on('message', (data: Buffer) => {
    const msg = JSON.parse(data.toString());
    if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(msg.params.chunk);
    else if (msg.id !== undefined) pending.get(msg.id)?.(msg);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<{ result?: { result?: { value?: unknown } } }>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  const answers: string[] = [];
  for (const expression of exprs) {
    const r = await call('Runtime.evaluate', { expression, returnByValue: true });
    answers.push(String(r.result?.result?.value));
  }
  if (takeSnapshot) {
    await call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    const raw = chunks.join('');
    if (snapshotFile) writeFileSync(snapshotFile, raw);
    answers.push(summariseSnapshot(JSON.parse(raw)));
  }
  ws.close();
  return answers;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self sizes in the heap snapshot, summed by node type and by the largest names (constructors, code kinds). */
function summariseSnapshot(s: Snapshot): string {
  const f = s.snapshot.meta.node_fields;
  const width = f.length;
  const [typeAt, nameAt, sizeAt] = [f.indexOf('type'), f.indexOf('name'), f.indexOf('self_size')];
  const types = s.snapshot.meta.node_types[0];
  const byType = new Map<string, number>();
  const byName = new Map<string, number>();
  const largest: [number, string][] = [];
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt] as number] ?? '?';
    const size = s.nodes[i + sizeAt] as number;
    const raw =
      type === 'string' || type === 'concatenated string'
        ? '(string)'
        : (s.strings[s.nodes[i + nameAt] as number] ?? '?');
    const name = `${type}:${raw.slice(0, 60)}`;
    byType.set(type, (byType.get(type) ?? 0) + size);
    byName.set(name, (byName.get(name) ?? 0) + size);
    if (size >= 64 * 1024)
      largest.push([size, `${type}:${(s.strings[s.nodes[i + nameAt] as number] ?? '?').slice(0, 80)}`]);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `    ${(v / 1024 / 1024).toFixed(2).padStart(6)} MiB  ${k}`)
      .join('\n');
  const big = largest
    .sort((a, b) => b[0] - a[0])
    .slice(0, 12)
    .map(([v, k]) => `    ${(v / 1024 / 1024).toFixed(2).padStart(6)} MiB  ${JSON.stringify(k)}`)
    .join('\n');
  return `  heap snapshot, self size by node type:\n${top(byType, 12)}\n  by name:\n${top(byName, 25)}\n  largest objects:\n${big}`;
}

const gwData = tempDir('mem-attr-gw');
const gwPort = await freePort();
const gwEnv = { LETKITE_DATA: gwData, LETKITE_PORT: String(gwPort) };
const gw = launch([builtCli, 'gateway'], gwEnv);
await waitFor(`gateway: ${gw.out}`, () => /listening on/.test(gw.out), 60_000);
const admin = (args: string[]) =>
  spawnSync(process.execPath, [builtCli, 'admin', ...args], { env: { ...process.env, ...gwEnv }, encoding: 'utf8' });
const client = await mcpClient(
  `http://localhost:${gwPort}`,
  admin(['token', 'create', '--name', 'attr']).stdout.trim(),
);

console.log(`agent idle after ${commands} command(s), ${idleMs} ms settle, load ${loadAverage()}`);
for (const [i, variant] of variants.entries()) {
  const state = tempDir('mem-attr-agent');
  const ceiling = join(state, 'ceiling.toml');
  const env = {
    LETKITE_AGENT_STATE: state,
    LETKITE_CEILING: ceiling,
    LETKITE_EXEC_LAUNCHER_IDLE_MS: '2000',
    ...extraEnv,
    ...variant.env,
  };
  const name = `attr-${i}`;
  const joined = spawnSync(
    process.execPath,
    [variant.env.BUNDLE ?? builtAgent, 'join', `http://localhost:${gwPort}`, '-', '--name', name, ...RUN_AS],
    {
      input: admin(['join-token']).stdout.trim(),
      env: { ...process.env, ...env },
      encoding: 'utf8',
    },
  );
  if (joined.status !== 0) throw new Error(`join failed: ${joined.stderr}`);
  writeFileSync(ceiling, FULL_SHELL_CEILING);
  const inspectPort = await freePort();
  const bundle = variant.env.BUNDLE ?? builtAgent;
  const agent = launch([`--inspect-port=127.0.0.1:${inspectPort}`, ...variant.flags, bundle, 'run'], env);
  await waitFor(`agent: ${agent.out}`, () => /connected to/.test(agent.out), 60_000);
  await machineOnline(client, name);
  const pid = agent.child.pid as number;
  const startRss = rssKiB(pid);
  for (let c = 0; c < commands; c++) {
    const r = await callTool(client, 'exec', { machine: name, command: `echo ${c}` });
    if (!r.ok) throw new Error(`exec failed: ${JSON.stringify(r.error)}`);
  }
  // RSS every 2 s of the idle wait: shows whether V8's memory reducer (or anything else) gives memory back later.
  const timeline: string[] = [];
  for (let t = 0; t < idleMs; t += 2000) {
    await settle(Math.min(2000, idleMs - t));
    timeline.push((rssKiB(pid) / MiB).toFixed(0));
  }
  const tree = processTree(pid);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (k: string) => Number(status.match(new RegExp(`^${k}:\\s+(\\d+)`, 'm'))?.[1] ?? 0);
  console.log(
    `\n${variant.name} (${variant.words.join(' ') || 'no extra flags'}): RSS ${(rssKiB(pid) / MiB).toFixed(1)} MiB` +
      ` (PSS ${(pssKiB(pid) / MiB).toFixed(1)}; anon ${(field('RssAnon') / MiB).toFixed(1)}, file ${(field('RssFile') / MiB).toFixed(1)})` +
      `, ${(startRss / MiB).toFixed(1)} before the first command; ${tree.length} process(es); threads ${field('Threads')}`,
  );
  console.log(`  RSS every 2 s after the command (MiB): ${timeline.join(' ')}`);
  for (const [kind, v] of Object.entries(smapsByKind(pid))
    .filter(([, v]) => v.rss >= 256)
    .sort((a, b) => b[1].rss - a[1].rss)) {
    console.log(`  ${(v.rss / MiB).toFixed(1).padStart(6)} MiB RSS (${(v.pss / MiB).toFixed(1)} PSS)  ${kind}`);
  }
  if (mallocTrim) {
    const before = rssKiB(pid);
    const g = spawnSync(
      'gdb',
      ['-p', String(pid), '-batch', '-ex', 'call (void)malloc_stats()', '-ex', 'call (int)malloc_trim(0)'],
      { encoding: 'utf8' },
    );
    if (g.status !== 0) throw new Error(`gdb failed: ${g.stderr}`);
    await settle(200);
    // malloc_stats() writes to the agent's own stderr.
    const stats = agent.out
      .split('\n')
      .filter((l) => /^(Arena|system bytes|in use bytes|Total)/.test(l))
      .join('; ');
    console.log(`  malloc_stats (main arena first): ${stats}`);
    console.log(`  malloc_trim(0): RSS ${(before / MiB).toFixed(1)} -> ${(rssKiB(pid) / MiB).toFixed(1)} MiB`);
  }
  process.kill(pid, 'SIGUSR1');
  await waitFor('the inspector', async () => {
    try {
      return (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).ok;
    } catch {
      return false;
    }
  });
  const mu =
    'JSON.stringify(Object.fromEntries(Object.entries(process.memoryUsage()).map(([k,v])=>[k,(v/1048576).toFixed(1)])))';
  const spaces =
    "process.getBuiltinModule('v8').getHeapSpaceStatistics().map(s=>s.space_name+' '+(s.space_used_size/1048576).toFixed(1)+'/'+(s.physical_space_size/1048576).toFixed(1)).join(', ')";
  const code =
    "JSON.stringify(Object.fromEntries(Object.entries(process.getBuiltinModule('v8').getHeapCodeStatistics()).map(([k,v])=>[k,(v/1048576).toFixed(2)])))";
  const [memory, heap, codeStats, summary] = await inspect(inspectPort, [mu, spaces, code], snapshot);
  console.log(`  memoryUsage (MiB, after the inspector opened): ${memory}`);
  console.log(`  heap spaces used/physical (MiB): ${heap}`);
  console.log(`  code statistics (MiB): ${codeStats}`);
  if (summary) console.log(summary);
  if (recreate > 0) {
    const waitMs = Number(variant.env.LETKITE_COMMAND_RULES_IDLE_MS ?? '60000') + 1000;
    const timed = async (command: string) => {
      const t0 = performance.now();
      const r = await callTool(client, 'exec', { machine: name, command });
      if (!r.ok) throw new Error(`exec failed: ${JSON.stringify(r.error)}`);
      return performance.now() - t0;
    };
    const cold: number[] = [];
    const warm: number[] = [];
    for (let k = 0; k < recreate; k++) {
      await settle(waitMs);
      cold.push(await timed('echo after-idle'));
      warm.push(await timed('echo loaded'));
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]?.toFixed(1);
    console.log(
      `  exec after the grammar was let go: median ${med(cold)} ms (${cold.map((x) => x.toFixed(0)).join(' ')}); ` +
        `right after, loaded: median ${med(warm)} ms (${warm.map((x) => x.toFixed(0)).join(' ')}); load ${loadAverage()}`,
    );
  }
  if (firstUse) {
    const calls: [string, Record<string, unknown>][] = [
      ['list_dir', { path: '/' }],
      ['shell_run', { command: 'true' }],
      ['job_status', { job_id: 'job_AAAAAAAAAAAAAAAA' }],
      ['terminal_open', {}],
    ];
    const timings: string[] = [];
    for (const [tool, args] of calls) {
      const ms: number[] = [];
      for (let k = 0; k < 2; k++) {
        const t0 = performance.now();
        const r = await callTool<{ terminal_id?: string }>(client, tool, { machine: name, ...args });
        ms.push(performance.now() - t0);
        // job_status of an unknown job answers not_found, from the loaded job manager: the load is what is timed.
        if (!r.ok && r.error?.code !== 'not_found') throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
        if (r.data?.terminal_id)
          await callTool(client, 'terminal_close', { machine: name, terminal_id: r.data.terminal_id });
      }
      timings.push(`${tool} ${ms.map((x) => x.toFixed(1)).join(' / ')} ms`);
    }
    console.log(`  first / second request: ${timings.join(', ')}; load ${loadAverage()}`);
    await settle(idleMs);
    console.log(`  RSS ${idleMs} ms after those: ${(rssKiB(pid) / MiB).toFixed(1)} MiB`);
  }
  if (showOutput) console.log(agent.out.replace(/^/gm, '  | '));
  agent.child.kill('SIGTERM');
  await new Promise((r) => agent.child.once('exit', r));
  removeDir(state);
}
await client.close();
gw.child.kill('SIGTERM');
await new Promise((r) => gw.child.once('exit', r));
removeDir(gwData);
process.exit(0);
