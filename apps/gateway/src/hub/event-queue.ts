/**
 * A queue with one asynchronous reader: a streamed call's events are pushed as the socket delivers them and read
 * with `for await`. The reader's loop ends after the last event pushed before `end()`. What is queued is bounded
 * by the caller (credit flow control, plus the byte limit the hub enforces with `queuedBytes`).
 */
export class EventQueue<T> implements AsyncIterable<T> {
  /** Consumed slots are cleared at once (below `head`): a read event is not kept alive until the next compaction. */
  private items: (T | undefined)[] = [];
  private head = 0;
  private waiter: ((result: IteratorResult<T>) => void) | null = null;
  private ended = false;
  private reading = false;
  /** Bytes the queued events hold, as measured by `push`'s caller. */
  queuedBytes = 0;
  private readonly sizes: number[] = [];

  /** Queues one event (ignored after `end()`); `bytes` is what it holds, for the caller's bound. */
  push(item: T, bytes = 0): void {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: item, done: false });
      return;
    }
    this.items.push(item);
    this.sizes.push(bytes);
    this.queuedBytes += bytes;
  }

  /** No more events: the reader finishes what is queued, then its loop ends. */
  end(): void {
    this.ended = true;
    if (this.waiter && this.head >= this.items.length) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: undefined, done: true });
    }
  }

  /** Ends the queue and drops what it holds (a call that failed: nobody needs the rest). */
  discard(): void {
    this.items = [];
    this.sizes.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
    this.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.reading) throw new Error('a stream can be read once');
    this.reading = true;
    return {
      next: () => {
        if (this.head < this.items.length) {
          const value = this.items[this.head] as T;
          this.items[this.head] = undefined;
          this.queuedBytes -= this.sizes[this.head] ?? 0;
          this.head += 1;
          if (this.head > 1024 && this.head * 2 > this.items.length) {
            this.items = this.items.slice(this.head);
            this.sizes.splice(0, this.head);
            this.head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
      return: () => {
        this.discard();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
