/**
 * bench/reconnect-storm: a fleet comes back after a gateway restart. Connects N simulated agents (real protocol,
 * the real agent's jittered backoff; bench/support/sim-agents.ts) to one gateway, restarts the gateway process on
 * the same port and data, and records how many are online each second until all are back: the curve, the time to
 * all, failed attempts by reason (refusals with Retry-After included), and the gateway's CPU during the storm.
 *
 *   npx tsx bench/reconnect-storm/run.ts [--quick] [--agents N]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createJoinToken, openStore } from '@letkite/gateway';
import { TestGateway } from '../../test/support/letkite';
import { cpuSeconds, fdLimit, loadAverage, settle } from '../support/proc-stats';
import { enrollSimMachine, inParallel, SimFleet } from '../support/sim-agents';

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, agents: { type: 'string' } },
});
const N = Number(values.agents ?? (values.quick ? 1_000 : Math.min(10_000, fdLimit() - 500)));
const GOAL_S = 60;

const gw = await TestGateway.start({ LETKITE_HEARTBEAT_MS: '15000' });
const tokens: string[] = [];
{
  const store = await openStore(join(gw.dataDir, 'letkite.db'));
  const { account, owner } = await store.bootstrap(new Date().toISOString());
  for (let i = 0; i < N; i++) {
    const t = await createJoinToken(
      { store, now: new Date() },
      { accountId: account.id, actor: `user:${owner.id}`, ttlMs: 3_600_000 },
    );
    tokens.push(t.token);
  }
  await store.close();
}
const machines = await inParallel(tokens, 16, (token, i) => enrollSimMachine(gw.url, token, i));
const fleet = new SimFleet(SimFleet.wsUrlOf(gw.url), machines);
await fleet.connectAll(200);
await settle();
const failuresBefore = fleet.failures;
fleet.failureReasons.clear();

// The restart: the old process goes (its sockets close, every agent starts its backoff), a new one starts.
const tDown = performance.now();
await gw.restart();
const restartS = (performance.now() - tDown) / 1000;
const pid = gw.process?.child.pid as number;
const cpu0 = cpuSeconds(pid);
const curve: { t: number; online: number }[] = [];
let allBackS = Number.NaN;
while ((performance.now() - tDown) / 1000 < GOAL_S * 2) {
  const t = (performance.now() - tDown) / 1000;
  curve.push({ t, online: fleet.online });
  if (fleet.online === N) {
    allBackS = t;
    break;
  }
  await new Promise((r) => setTimeout(r, 1000));
}
const stormCpu = cpuSeconds(pid) - cpu0;

console.log(`\nreconnect storm, ${N} agents, gateway restarted (${new Date().toISOString()}, load ${loadAverage()})`);
console.log(`gateway down and up again in ${restartS.toFixed(1)} s (stop, start, listening)`);
console.log('| s after the stop | online |');
console.log('|---|---|');
for (const p of curve) console.log(`| ${p.t.toFixed(0)} | ${p.online} |`);
console.log(
  `failed attempts during the storm: ${fleet.failures - failuresBefore} ${JSON.stringify(Object.fromEntries(fleet.failureReasons))}`,
);
console.log(`gateway CPU during the storm: ${stormCpu.toFixed(1)} s`);
console.log(
  `reconnect storm: ${N} agents, ${Number.isNaN(allBackS) ? `not all back after ${GOAL_S * 2} s (${fleet.online} online)` : `all back in ${allBackS.toFixed(1)} s`} (goal ≤ ${GOAL_S} s)`,
);

fleet.stop();
await gw.dispose();
