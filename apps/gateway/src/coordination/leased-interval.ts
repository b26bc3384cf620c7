import type { Lease } from './coordination';

/**
 * Runs `work` every `everyMs`, but only on the gateway holding `lease` (one runner per cluster; the lease lapses
 * when its holder stops renewing, and another gateway takes over). A slow run is never stacked with the next.
 * Returns the stop function, which waits for a running `work` and gives the lease up.
 */
export function startLeasedInterval(options: {
  lease: Lease;
  everyMs: number;
  work: () => Promise<unknown>;
  log: (msg: string) => void;
  what: string;
}): () => Promise<void> {
  let running: Promise<void> | null = null;
  const tick = async () => {
    if (!(await options.lease.hold())) return;
    await options.work();
  };
  const timer = setInterval(() => {
    if (running) return;
    running = tick()
      .catch((err) => options.log(`${options.what} failed: ${String(err)}`))
      .finally(() => {
        running = null;
      });
  }, options.everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
    await options.lease.release();
  };
}
