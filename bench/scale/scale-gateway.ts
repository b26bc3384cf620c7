/**
 * The scale benchmarks' gateway: a real gateway process (TestGateway) with heap-preload.mjs loaded, a fleet of
 * simulated machines enrolled with real join tokens, and readings of the gateway's live heap on demand.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createJoinToken, openStore } from '@letkite/gateway';
import { TestGateway } from '../../test/support/letkite';
import { waitFor } from '../../test/support/processes';
import { enrollSimMachine, inParallel, type SimMachine } from '../support/sim-agents';

const PRELOAD = join(import.meta.dirname, 'heap-preload.mjs');

export interface ScaleGateway {
  gateway: TestGateway;
  pid: number;
  /** Where the gateway writes its heap readings (`<heapOut>.<n>.json`, `.heapsnapshot`). */
  heapOut: string;
}

/** What heap-preload.mjs writes on each SIGUSR2. */
export interface HeapReading {
  usage: NodeJS.MemoryUsage;
  spaces: Record<string, { used: number; committed: number }>;
}

/** Starts the gateway; heartbeats every 15 s, as a fleet would run (the tests' 1 s would be a load of its own). */
export async function startScaleGateway(heapOut: string, options: { snapshots?: boolean } = {}): Promise<ScaleGateway> {
  const gateway = await TestGateway.start({
    LETKITE_HEARTBEAT_MS: '15000',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${PRELOAD}`.trim(),
    LETKITE_BENCH_HEAP_OUT: heapOut,
    ...(options.snapshots ? { LETKITE_BENCH_HEAP_SNAPSHOT: '1' } : {}),
  });
  const pid = gateway.process?.child.pid;
  if (!pid) throw new Error('no gateway pid');
  return { gateway, pid, heapOut };
}

/** The `n`-th heap reading (1, 2, …): the gateway collects all garbage, then reports its live heap. */
export async function heapReading(gw: ScaleGateway, n: number): Promise<HeapReading> {
  const file = `${gw.heapOut}.${n}.json`;
  process.kill(gw.pid, 'SIGUSR2');
  await waitFor(
    () => `heap reading ${file}`,
    () => existsSync(file),
    300_000,
  );
  return JSON.parse(readFileSync(file, 'utf8')) as HeapReading;
}

/**
 * Enrolls `n` simulated machines. Join tokens go straight into the gateway's database (the same code
 * `letkite admin join-token` runs): minting 20,000 through the CLI would measure process start-ups, not the gateway.
 */
export async function enrollFleet(gateway: TestGateway, n: number, inFlight = 16): Promise<SimMachine[]> {
  const tokens: string[] = [];
  const store = await openStore(join(gateway.dataDir, 'letkite.db'));
  try {
    const { account, owner } = await store.bootstrap(new Date().toISOString());
    for (let i = 0; i < n; i++) {
      const t = await createJoinToken(
        { store, now: new Date() },
        { accountId: account.id, actor: `user:${owner.id}`, ttlMs: 3_600_000 },
      );
      tokens.push(t.token);
    }
  } finally {
    await store.close();
  }
  return inParallel(tokens, inFlight, (token, i) => enrollSimMachine(gateway.url, token, i));
}
