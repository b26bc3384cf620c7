/**
 * Preloaded into a gateway by the scale benchmarks (NODE_OPTIONS="--import …/heap-preload.mjs"): on SIGUSR2 it
 * forces full garbage collections and writes the process's memory figures as JSON to
 * `$LETKITE_BENCH_HEAP_OUT.<n>.json` (n counts the signals), and with `LETKITE_BENCH_HEAP_SNAPSHOT=1` a heap
 * snapshot beside it (`.<n>.heapsnapshot`). The live heap after a full GC is what the objects themselves hold; RSS
 * minus that is V8's headroom, freed pages not yet returned, and native memory.
 * Bench-only: the gateway never reads these variables.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';

const out = process.env.LETKITE_BENCH_HEAP_OUT;
if (out) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  let n = 0;
  process.on('SIGUSR2', () => {
    n += 1;
    // Twice: the first full GC runs finalizers (weak references) that free more in the second.
    gc();
    gc();
    const usage = process.memoryUsage();
    const spaces = Object.fromEntries(
      getHeapSpaceStatistics().map((s) => [s.space_name, { used: s.space_used_size, committed: s.space_size }]),
    );
    if (process.env.LETKITE_BENCH_HEAP_SNAPSHOT === '1') writeHeapSnapshot(`${out}.${n}.heapsnapshot`);
    // Renamed into place: the benchmark polls for the file and must never read half of it.
    writeFileSync(`${out}.${n}.json.tmp`, JSON.stringify({ usage, spaces }));
    renameSync(`${out}.${n}.json.tmp`, `${out}.${n}.json`);
  });
}
