/** Something beaten once per heartbeat period: an agent socket pings its agent, or closes if the last ping went unanswered. */
export interface Beating {
  beat(): void;
}

/** How many slots a wheel spreads its members over: each tick beats one slot, 1/16 of the fleet. */
const SLOTS = 16;

/**
 * One timer for the heartbeats of every agent socket with the same period, instead of one interval per socket
 * (a Timeout object, a closure and a timer-list entry each: at 20,000 idle agents that is megabytes). Members are
 * spread over slots and one tick beats one slot, so the pings of a large fleet go out in 16 small batches per
 * period rather than all at once. A member is first beaten between one period minus one tick and one period
 * after it joins, and then once per period, as an interval of its own would.
 */
export class HeartbeatWheel {
  private readonly slots: Set<Beating>[] = Array.from({ length: SLOTS }, () => new Set());
  /** The slot the next tick beats. */
  private next = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly periodMs: number) {
    if (!(periodMs > 0)) throw new RangeError('a heartbeat period must be positive');
  }

  /** Starts beating `member` once per period. */
  add(member: Beating): void {
    if (this.slots.some((slot) => slot.has(member))) return;
    // The slot beaten last: its next turn is a whole period away (less the time since that tick).
    (this.slots[(this.next + SLOTS - 1) % SLOTS] as Set<Beating>).add(member);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.periodMs / SLOTS);
      // Heartbeats alone never keep the process alive (as the per-socket intervals before them).
      this.timer.unref();
    }
  }

  /** Stops beating `member`; the wheel's timer stops with its last member. */
  remove(member: Beating): void {
    // Sixteen deletes rather than a member → slot map: the map would cost an entry per agent.
    for (const slot of this.slots) slot.delete(member);
    if (this.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** How many members it beats (tests, the benchmarks). */
  get size(): number {
    return this.slots.reduce((n, slot) => n + slot.size, 0);
  }

  private tick(): void {
    const slot = this.slots[this.next] as Set<Beating>;
    this.next = (this.next + 1) % SLOTS;
    // A beat may close its socket, which removes it from the slot: a Set's iteration allows that.
    for (const member of slot) member.beat();
  }
}

const wheels = new Map<number, HeartbeatWheel>();

/**
 * The process's wheel for one heartbeat period. Shared by every endpoint and session of the process: one gateway
 * runs one period, and tests that run several gateways in one process with different periods get one wheel each.
 */
export function heartbeatWheel(periodMs: number): HeartbeatWheel {
  let wheel = wheels.get(periodMs);
  if (!wheel) {
    wheel = new HeartbeatWheel(periodMs);
    wheels.set(periodMs, wheel);
  }
  return wheel;
}
