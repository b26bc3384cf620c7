// Preloaded (NODE_OPTIONS=--require) into the gateway and agent processes by `run.ts --cpu-prof=DIR`: Node 20 does
// not accept --cpu-prof in NODE_OPTIONS, so this starts V8's profiler through the inspector and writes
// DIR/<command>-<pid>.cpuprofile when the process exits. Short-lived CLI commands (join, tokens) are skipped.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { getHeapSpaceStatistics } = require('node:v8');
const { PerformanceObserver, constants } = require('node:perf_hooks');

const dir = process.env.LETKITE_CPU_PROFILE_DIR;
const command = process.argv[2] ?? '';
if (dir && (command === 'gateway' || command === 'agent')) {
  const session = new Session();
  session.connect();
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.enable');
  session.post('Profiler.start');
  // Garbage collections by kind (count, total ms), written next to the profile.
  const gc = {};
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = kinds[entry.detail?.kind] ?? String(entry.detail?.kind);
      const reason = entry.detail?.flags ?? 0;
      const k = `${kind}/flags=${reason}`;
      gc[k] ??= { count: 0, ms: 0 };
      gc[k].count += 1;
      gc[k].ms += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  // Peaks of process.memoryUsage(), sampled, to see what a change does to memory.
  const peak = {};
  setInterval(() => {
    for (const [k, v] of Object.entries(process.memoryUsage())) peak[k] = Math.max(peak[k] ?? 0, v);
    for (const space of getHeapSpaceStatistics()) {
      peak[space.space_name] = Math.max(peak[space.space_name] ?? 0, space.space_size);
    }
  }, 50).unref();
  const startMemory = { ...process.memoryUsage() };
  for (const space of getHeapSpaceStatistics()) startMemory[space.space_name] = space.space_size;
  process.on('exit', () => {
    const memory = { start: startMemory, peak };
    const report = { cpu: process.cpuUsage(), gc, memory };
    writeFileSync(join(dir, `${command}-${process.pid}.gc.json`), JSON.stringify(report, null, 1));
    // The same-thread session answers synchronously, so this works inside 'exit'.
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${command}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
