import { randomBytes } from 'node:crypto';
import { type ErrorCode, toLetKiteError } from '@letkite/protocol';
import type { RelayProgress, RelayResult } from './relay';

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

export type TransferRun = (
  progress: RelayProgress,
  signal: AbortSignal,
  onProgress: () => void,
) => Promise<RelayResult>;

/**
 * Background transfers of one gateway process, in memory. A gateway restart loses them: running transfers fail
 * (their agents' sockets close, so each destination removes its temporary copy) and their ids answer not_found,
 * which transfer_status documents. Ids are random, and a transfer is only visible to its own account.
 */
export class TransferRegistry {
  private readonly transfers = new Map<string, TransferRecord>();

  constructor(private readonly now: () => number = Date.now) {}

  start(accountId: string, run: TransferRun): string {
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
    };
    this.transfers.set(id, record);
    const sample = () => {
      const at = this.now();
      const last = record.samples[record.samples.length - 1];
      if (last && at - last.at < 250) return;
      record.samples.push({ at, bytes: record.progress.bytesDone });
      while (record.samples.length > 2 && at - (record.samples[1]?.at ?? at) > RATE_WINDOW_MS) record.samples.shift();
    };
    run(record.progress, record.abort.signal, sample).then(
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
    );
    return id;
  }

  /** The transfer's status, or null when this gateway does not know the id (or it belongs to another account). */
  status(accountId: string, id: string): TransferStatus | null {
    const record = this.transfers.get(id);
    if (!record || record.accountId !== accountId) return null;
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

  /** Cancels every running transfer (gateway shutdown). */
  close(): void {
    for (const record of this.transfers.values()) record.abort.abort();
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
