import type Database from 'better-sqlite3';
import type { AuditEventInput } from '../types';
import { insertAudit } from './audit';

interface Queued {
  event: AuditEventInput;
  resolve: (id: number) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit of standalone audit rows (a tool call's row, a sign-in's): rows appended during one turn of the
 * event loop are written in one IMMEDIATE transaction at its end (setImmediate), instead of one transaction each.
 * Under load the transaction's BEGIN and COMMIT were the larger part of a light tool call's audit cost.
 *
 * Nothing is lost by waiting: `append` resolves only after the transaction holding its row committed, and a tool
 * call's answer is sent only after that (tool-handler.ts awaits it), so a crash can lose only rows whose calls
 * were never answered — and those were never committed, exactly as before. If the batch fails, each of its rows
 * is tried again in a transaction of its own, so one bad row fails only its own call (fail closed, as before).
 */
export class AuditBatch {
  private queue: Queued[] = [];

  constructor(private readonly db: Database.Database) {}

  append(event: AuditEventInput): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ event, resolve, reject });
    });
  }

  /** Writes what is queued now (also called before the database closes). */
  flush(): void {
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    let ids: number[];
    try {
      ids = this.db.transaction(() => batch.map((q) => insertAudit(this.db, q.event))).immediate();
    } catch {
      for (const q of batch) {
        try {
          q.resolve(insertAudit(this.db, q.event));
        } catch (err) {
          q.reject(err);
        }
      }
      return;
    }
    for (const [i, q] of batch.entries()) q.resolve(ids[i] as number);
  }
}
