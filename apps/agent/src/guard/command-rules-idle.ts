import { measureMemory } from 'node:vm';
import { loadCommandRules, unloadCommandRules } from '@letkite/command-rules';

/** How long the agent keeps the bash grammar after the last request before it lets it go (like its launcher). */
export const DEFAULT_COMMAND_RULES_IDLE_MS = 60_000;

/**
 * `LETKITE_COMMAND_RULES_IDLE_MS` (read by `letkite agent run`): milliseconds; 0 keeps the grammar for good; unset
 * or not a whole number, the default.
 */
export function commandRulesIdleFromEnv(value: string | undefined): number | null {
  if (value === undefined || value.trim() === '') return DEFAULT_COMMAND_RULES_IDLE_MS;
  const ms = Number(value);
  if (!(Number.isSafeInteger(ms) && ms >= 0)) return DEFAULT_COMMAND_RULES_IDLE_MS;
  return ms === 0 ? null : ms;
}

/**
 * Keeps the command rules' bash grammar loaded while requests run and lets it go after `idleMs` without one
 * (bench/memory: about 5 MiB of the idle agent's RSS). Every request holds it from before its handler starts until
 * it ends, so a command is never judged without the grammar; the first request after a release loads it again
 * (tens of milliseconds). `idleMs` null keeps it for good.
 */
export class CommandRulesIdle {
  private holds = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly idleMs: number | null) {}

  /** Loads the grammar if it was let go, and keeps it until the returned function is called. */
  async hold(): Promise<() => void> {
    this.holds++;
    this.cancelRelease();
    try {
      await loadCommandRules();
    } catch (err) {
      this.letGo();
      throw err;
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.letGo();
    };
  }

  /** Agent shutdown: no release timer keeps running. */
  close(): void {
    this.cancelRelease();
  }

  private letGo(): void {
    this.holds--;
    if (this.holds > 0 || this.idleMs === null) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.holds === 0 && unloadCommandRules()) collectNow();
    }, this.idleMs);
    // An idle timer must not keep the process alive.
    this.timer.unref();
  }

  private cancelRelease(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * A full garbage collection now, so the dropped grammar's wasm instance is freed at once: an idle agent allocates
 * next to nothing, so V8 would otherwise collect it whenever its memory reducer happens to run, if at all.
 * `vm.measureMemory` with eager execution is the one full collection Node offers without `--expose-gc`.
 */
function collectNow(): void {
  measureMemory({ mode: 'summary', execution: 'eager' }).catch(() => {
    // Only a measurement that could not be taken: the collection is what counted.
  });
}
