// A CPU profile of a whole process, for `bench/throughput/run.ts --profile DIR` (and any bench that can pass
// NODE_OPTIONS): `--import` this file and set LETKITE_CPU_PROFILE_DIR. Node refuses `--cpu-prof` in NODE_OPTIONS,
// so the profiler is started through node:inspector and its profile written when the process exits. A local
// inspector session answers synchronously, which is what lets the exit handler stop it and write the file.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.LETKITE_CPU_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  // 200 µs between samples: light tool calls take well under a millisecond of CPU each.
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  // On exit, whatever ends the process normally (a SIGTERM the process handles ends in an exit too).
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
