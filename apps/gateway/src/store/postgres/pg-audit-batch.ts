import type { AuditEventInput } from '../types';
import { appendAuditRow, insertAudit } from './pg-audit';
import type { PgDatabase } from './pg-database';

/** Rows per transaction at most: a backlog is written in several, so no commit holds the chain lock for long. */
const MAX_BATCH = 256;

interface Queued {
  event: AuditEventInput;
  resolve: (id: number) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit of standalone audit rows on PostgreSQL, the twin of sqlite/audit-batch.ts. Every row locks its
 * account's `audit_chains` row until commit, so one account's appends commit one after the other, each paying a
 * synchronous commit while holding the lock (bench/RESULTS.md, cluster: 50 calls/s). Here the rows queued while
 * the previous batch commits go out together: one transaction, one commit, one lock hold for the lot.
 *
 * Nothing is lost by waiting: `append` resolves only after the transaction holding its row committed, and a tool
 * call answers only after that (tool-handler.ts). A batch locks chain rows in account order (rows of one account
 * keep their order), so two gateways' batches cannot deadlock on each other. If a batch fails, each of its rows
 * is tried again in a transaction of its own, so one bad row fails only its own call.
 */
export class PgAuditBatch {
  private queue: Queued[] = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly database: PgDatabase) {}

  append(event: AuditEventInput): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ event, resolve, reject });
      // A batch being written picks the queue up when it is done; otherwise the end of this turn does.
      if (this.queue.length === 1 && this.writing === null) setImmediate(() => this.drain());
    });
  }

  /** Resolves once every row appended so far is written (before the pool closes). */
  async flush(): Promise<void> {
    this.drain();
    while (this.writing !== null) await this.writing;
  }

  private drain(): void {
    if (this.writing !== null || this.queue.length === 0) return;
    this.writing = (async () => {
      while (this.queue.length > 0) {
        await this.write(this.queue.splice(0, MAX_BATCH));
      }
    })().finally(() => {
      this.writing = null;
    });
  }

  private async write(batch: Queued[]): Promise<void> {
    const ordered = [...batch].sort((a, b) =>
      a.event.accountId < b.event.accountId ? -1 : a.event.accountId > b.event.accountId ? 1 : 0,
    );
    let ids: number[];
    try {
      ids = await this.database.transaction(async (tx) => {
        const out: number[] = [];
        for (const q of ordered) out.push(await insertAudit(tx, q.event));
        return out;
      });
    } catch {
      await Promise.all(ordered.map((q) => appendAuditRow(this.database, q.event).then(q.resolve, q.reject)));
      return;
    }
    for (const [i, q] of ordered.entries()) q.resolve(ids[i] as number);
  }
}
