import { randomBytes } from 'node:crypto';
import { type ErrorCode, toLetKiteError } from '@letkite/protocol';
import type { RelayProgress, RelayResult } from './relay';
import type { TransferStore } from './transfer-store';

export type TransferStateName = 'running' | 'done' | 'failed' | 'cancelled';

interface TransferRecord {
  id: string;
  accountId: string;
  state: TransferStateName;
  progress: RelayProgress;
  startedAt: number;
  endedAt: number | null;
  result: (RelayResult & { duration_ms: number }) | null;
  error: { code: ErrorCode; message: string } | null;
  /** Recent (time, bytes done) samples for the current rate. */
  samples: { at: number; bytes: number }[];
  abort: AbortController;
  /** The store writes of this transfer, in order (a later write never lands before an earlier one). */
  writes: Promise<void>;
}

export interface TransferStatus {
  transfer_id: string;
  state: TransferStateName;
  bytes_done: number;
  bytes_total: number | null;
  rate_bytes_per_s: number;
  files_done: number;
  files_total: number | null;
  started_at: string;
  result?: RelayResult & { duration_ms: number };
  error?: { code: ErrorCode; message: string };
}

/** The rate is measured over this window, so it follows the transfer's current speed. */
const RATE_WINDOW_MS = 5000;
/** Finished transfers are forgotten after this long. */
const KEEP_FINISHED_MS = 3600_000;
/** Most transfers remembered per gateway; the oldest finished ones go first. */
const MAX_REMEMBERED = 1000;
/** How often a running transfer's status is written to the store. */
export const TRANSFER_WRITE_EVERY_MS = 1000;
/** A running transfer whose row was not updated for this long lost its relaying gateway: it reads as failed. */
export const TRANSFER_STALE_MS = 15_000;

export type TransferRun = (
  progress: RelayProgress,
  signal: AbortSignal,
  onProgress: () => void,
) => Promise<RelayResult>;

/**
 * Background transfers relayed by this gateway, with their status written to the store (about once a second, and
 * the outcome at the end) so `transfer_status` answers on any gateway of the cluster. The abort handles stay here:
 * a gateway that stops (or dies) takes its running transfers with it (their agents' sockets close, so each
 * destination removes its temporary copy), and their rows then read as failed. Ids are random, and a transfer is
 * only visible to its own account.
 */
export class TransferRegistry {
  private readonly transfers = new Map<string, TransferRecord>();

  constructor(
    private readonly store: TransferStore,
    private readonly now: () => number = Date.now,
    private readonly log: (msg: string) => void = () => {},
  ) {}

  /** Starts `run` in the background; resolves with its id once the store has its row (any gateway can read it). */
  async start(accountId: string, run: TransferRun): Promise<string> {
    this.prune();
    const id = `tr_${randomBytes(12).toString('base64url')}`;
    const startedAt = this.now();
    const record: TransferRecord = {
      id,
      accountId,
      state: 'running',
      progress: { bytesDone: 0, filesDone: 0, bytesTotal: null, filesTotal: null },
      startedAt,
      endedAt: null,
      result: null,
      error: null,
      samples: [{ at: startedAt, bytes: 0 }],
      abort: new AbortController(),
      writes: Promise.resolve(),
    };
    const at = new Date(startedAt).toISOString();
    await this.store.insert({
      id,
      accountId,
      state: 'running',
      status: this.snapshot(record),
      startedAt: at,
      updatedAt: at,
      endedAt: null,
    });
    this.transfers.set(id, record);
    const sample = () => {
      const at = this.now();
      const last = record.samples[record.samples.length - 1];
      if (last && at - last.at < 250) return;
      record.samples.push({ at, bytes: record.progress.bytesDone });
      while (record.samples.length > 2 && at - (record.samples[1]?.at ?? at) > RATE_WINDOW_MS) record.samples.shift();
    };
    // Written on a timer (not on every chunk) even when nothing moved, so a live transfer's row never looks stale.
    const writer = setInterval(() => this.write(record), TRANSFER_WRITE_EVERY_MS);
    writer.unref();
    run(record.progress, record.abort.signal, sample)
      .then(
        (result) => {
          record.endedAt = this.now();
          record.state = 'done';
          record.result = { ...result, duration_ms: Math.round(record.endedAt - record.startedAt) };
        },
        (err: unknown) => {
          record.endedAt = this.now();
          record.state = record.abort.signal.aborted ? 'cancelled' : 'failed';
          const e = toLetKiteError(err);
          record.error = { code: e.code, message: e.message };
        },
      )
      .finally(() => {
        clearInterval(writer);
        this.write(record);
      });
    return id;
  }

  /**
   * The transfer's status, or null when no gateway knows the id (or it belongs to another account). A transfer
   * relayed here is answered from memory (freshest); any other from the store.
   */
  async status(accountId: string, id: string): Promise<TransferStatus | null> {
    const record = this.transfers.get(id);
    if (record) return record.accountId === accountId ? this.snapshot(record) : null;
    const row = await this.store.get(accountId, id);
    if (!row) return null;
    if (row.state === 'running' && this.now() - Date.parse(row.updatedAt) > TRANSFER_STALE_MS) {
      return {
        ...row.status,
        state: 'failed',
        rate_bytes_per_s: 0,
        error: { code: 'internal', message: 'the gateway relaying this transfer stopped before it finished' },
      };
    }
    return row.status;
  }

  /** Waits for the store writes made so far (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.transfers.values()].map((r) => r.writes));
  }

  /** Cancels every running transfer (gateway shutdown). */
  close(): void {
    for (const record of this.transfers.values()) record.abort.abort();
  }

  private snapshot(record: TransferRecord): TransferStatus {
    const status: TransferStatus = {
      transfer_id: record.id,
      state: record.state,
      bytes_done: record.progress.bytesDone,
      bytes_total: record.progress.bytesTotal,
      rate_bytes_per_s: this.rate(record),
      files_done: record.progress.filesDone,
      files_total: record.progress.filesTotal,
      started_at: new Date(record.startedAt).toISOString(),
    };
    if (record.result) status.result = record.result;
    if (record.error) status.error = record.error;
    return status;
  }

  private write(record: TransferRecord): void {
    const status = this.snapshot(record);
    const endedAt = record.endedAt === null ? null : new Date(record.endedAt).toISOString();
    const updatedAt = new Date(this.now()).toISOString();
    record.writes = record.writes
      .then(() => this.store.update(record.id, { state: record.state, status, updatedAt, endedAt }))
      .catch((err) => this.log(`writing the status of transfer ${record.id} failed: ${String(err)}`));
  }

  private rate(record: TransferRecord): number {
    if (record.endedAt !== null) {
      const seconds = (record.endedAt - record.startedAt) / 1000;
      return seconds > 0 ? Math.round(record.progress.bytesDone / seconds) : 0;
    }
    const first = record.samples[0];
    const now = this.now();
    if (!first || now <= first.at) return 0;
    return Math.round(((record.progress.bytesDone - first.bytes) * 1000) / (now - first.at));
  }

  private prune(): void {
    const now = this.now();
    // Rows of transfers that ended (or died) over an hour ago are forgotten too; any gateway may do it.
    this.store
      .prune(new Date(now - KEEP_FINISHED_MS).toISOString())
      .catch((err) => this.log(`pruning transfers failed: ${String(err)}`));
    for (const [id, record] of this.transfers) {
      if (record.endedAt !== null && now - record.endedAt > KEEP_FINISHED_MS) this.transfers.delete(id);
    }
    if (this.transfers.size < MAX_REMEMBERED) return;
    for (const [id, record] of this.transfers) {
      if (record.endedAt !== null) this.transfers.delete(id);
      if (this.transfers.size < MAX_REMEMBERED) return;
    }
  }
}
