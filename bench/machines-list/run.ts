/**
 * bench/machines-list: machines_list latency at fleet size without connecting a fleet. Writes N machines (each
 * with a ceiling as agents report it) straight into a real gateway's database, then times machines_list through
 * the MCP SDK client: the first page (what an AI client asks) and every page (following next_cursor). Against a
 * gateway without paging the one answer is the whole fleet, timed as both. Presence is not the cost here (no
 * agent is connected; bench/scale measures with a connected fleet).
 *
 *   npx tsx bench/machines-list/run.ts [--quick] [--machines N]
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createJoinToken, openStore } from '@letkite/gateway';
import { callTool, mcpClient, TestGateway } from '../../test/support/letkite';
import { loadAverage } from '../support/proc-stats';
import { fmtMs, summary } from '../support/stats';

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, machines: { type: 'string' } },
});
const N = Number(values.machines ?? (values.quick ? 2_000 : 5_000));
const ROUNDS = values.quick ? 10 : 20;

// About the size of the effective ceiling an agent reports (labels, file layers, deny list, limits).
const ceiling = {
  shell: 'sandboxed',
  run_as: 'letkite',
  files: [
    { path: '~', access: 'rw' },
    { path: '/srv', access: 'ro' },
    { path: '/var/log', access: 'ro' },
  ],
  deny: ['~/.ssh', '~/.gnupg', '~/.aws', '/etc/letkite'],
  network: { egress: 'allow', tunnels: { allow: ['127.0.0.1:*'] } },
  approval: { tools: ['delete_path', 'terminal_open'], approvers: [] },
  limits: { exec_timeout_s: 600, max_output_bytes: 1_048_576, jobs: 16 },
  gui: 'off',
  wake: 'allow',
};

const gw = await TestGateway.start();
{
  const store = await openStore(join(gw.dataDir, 'letkite.db'));
  const { account, owner } = await store.bootstrap(new Date().toISOString());
  for (let i = 0; i < N; i++) {
    const jt = await createJoinToken({ store, now: new Date() }, { accountId: account.id, actor: `user:${owner.id}` });
    const id = `mch_${randomBytes(10).toString('hex')}`;
    const at = new Date().toISOString();
    const r = await store.enrollMachine(
      jt.id,
      {
        id,
        accountId: account.id,
        name: `host-${randomBytes(4).toString('hex')}`,
        publicKey: randomBytes(32).toString('base64'),
        hostname: `host-${i}.example`,
        os: 'linux',
        osRelease: '6.8.0',
        arch: 'x64',
        agentVersion: '0.1.0',
        labels: ['bench', `rack-${i % 40}`],
        ceiling: null,
        ceilingSource: null,
        ceilingError: null,
        enrolledAt: at,
        lastSeenAt: at,
      },
      { accountId: account.id, at, actor: `user:${owner.id}`, action: 'machine.enroll', target: id, outcome: 'ok' },
      'suffix',
    );
    if (!r.ok) throw new Error(`enroll failed: ${r.reason}`);
    await store.recordCeiling(id, { ceiling, source: 'file', error: null }, null);
  }
  await store.close();
}
const client = await mcpClient(gw.url, await gw.apiToken('bench'));

type ListPage = { machines: unknown[]; next_cursor?: string | null };
const listPage = async (args: Record<string, unknown>) => {
  const r = await callTool<ListPage>(client, 'machines_list', args);
  if (!r.ok) throw new Error(`machines_list failed: ${JSON.stringify(r.error)}`);
  return r.data;
};
const walk = async () => {
  let n = 0;
  let cursor: string | null | undefined = null;
  do {
    const p: ListPage = await listPage({ limit: 1000, ...(cursor ? { cursor } : {}) }).catch(async () =>
      // A gateway without paging refuses `limit` (strict input): its one answer is the whole fleet.
      listPage({}),
    );
    n += p.machines.length;
    cursor = p.next_cursor;
  } while (cursor);
  return n;
};
await listPage({});
if ((await walk()) !== N) throw new Error('machines_list did not list every machine');

const first: number[] = [];
const all: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  let t = performance.now();
  await listPage({});
  first.push(performance.now() - t);
  t = performance.now();
  await walk();
  all.push(performance.now() - t);
}
const f = summary('first page', first);
const w = summary('every page', all);
console.log(`\nmachines_list, ${N} machines (${new Date().toISOString()}, ${process.version}, load ${loadAverage()})`);
console.log('| what | p50 | p99 |');
console.log('|---|---|---|');
console.log(`| first page (no arguments) | ${fmtMs(f.p50)} | ${fmtMs(f.p99)} |`);
console.log(`| every machine (pages of 1,000) | ${fmtMs(w.p50)} | ${fmtMs(w.p99)} |`);

await client.close();
await gw.dispose();
