import {
  LetKiteError,
  MAX_FRAME_BYTES,
  type RequestContext,
  type SkippedEntry,
  STREAM_RECORD_COST,
  TRANSFER_WINDOW_BYTES,
  toLetKiteError,
} from '@letkite/protocol';
import type { AgentHub } from '../hub/types';

/** One end of a transfer, already resolved and checked by the gateway. */
export interface TransferEnd {
  machineId: string;
  path: string;
  context: RequestContext;
}

export interface RelayRequest {
  source: TransferEnd;
  destination: TransferEnd;
  overwrite: boolean;
  includeHidden: boolean;
  /** Credit window end to end (default TRANSFER_WINDOW_BYTES). */
  windowBytes?: number;
}

/** Progress as the stream passes through, for transfer_status and MCP progress notifications. */
export interface RelayProgress {
  bytesDone: number;
  filesDone: number;
  bytesTotal: number | null;
  filesTotal: number | null;
}

export interface RelayResult {
  bytes: number;
  files: number;
  sha256: string;
  skipped: SkippedEntry[];
}

/** A transfer fails when nothing moves for this long (an agent that hangs without disconnecting). */
export const TRANSFER_IDLE_TIMEOUT_MS = 60_000;

/** The calls themselves have no overall limit: a large copy takes as long as it takes while it keeps moving. */
const CALL_TIMEOUT_MS = 7 * 24 * 3600_000;

/**
 * Relays one transfer between two agents (or two requests on one agent): `transfer_receive` on the destination,
 * `transfer_send` on the source, and every record and data frame of the source's stream passed on as it arrives.
 *
 * Flow control is end to end: the destination grants credit as it writes, and the gateway hands exactly that
 * credit on to the source. So the gateway holds at most one window (plus a frame the source may overdraw) of data
 * at a time, however large the copy; a source that sends past its credit is cut off with protocol_error. Any
 * failure on either side cancels the other side, and the destination then removes its temporary copy.
 */
export async function relayTransfer(
  hub: AgentHub,
  request: RelayRequest,
  progress: RelayProgress,
  signal: AbortSignal,
  onProgress: () => void = () => undefined,
): Promise<RelayResult> {
  const windowBytes = request.windowBytes ?? TRANSFER_WINDOW_BYTES;
  const abort = new AbortController();
  let failure: LetKiteError | null = null;
  const fail = (err: unknown) => {
    failure ??= toLetKiteError(err);
    abort.abort();
  };
  const onOuterAbort = () => fail(new LetKiteError('timeout', 'the transfer was cancelled'));
  if (signal.aborted) onOuterAbort();
  signal.addEventListener('abort', onOuterAbort, { once: true });

  /** What the source has sent that the destination has not credited back yet. */
  let inFlight = 0;
  let lastMove = Date.now();
  const idle = setInterval(() => {
    if (Date.now() - lastMove > TRANSFER_IDLE_TIMEOUT_MS) {
      fail(new LetKiteError('timeout', `the transfer made no progress for ${TRANSFER_IDLE_TIMEOUT_MS / 1000} s`));
    }
  }, 1000);
  idle.unref();

  const charge = (cost: number) => {
    inFlight += cost;
    lastMove = Date.now();
    if (inFlight > windowBytes + MAX_FRAME_BYTES) {
      fail(new LetKiteError('protocol_error', 'the source machine sent past its credit'));
      return false;
    }
    return true;
  };

  const destination = hub.stream(
    request.destination.machineId,
    'transfer_receive',
    { path: request.destination.path, overwrite: request.overwrite, window_bytes: windowBytes },
    request.destination.context,
    { timeoutMs: CALL_TIMEOUT_MS, signal: abort.signal },
  );
  const source = hub.stream(
    request.source.machineId,
    'transfer_send',
    { path: request.source.path, include_hidden: request.includeHidden },
    request.source.context,
    { timeoutMs: CALL_TIMEOUT_MS, signal: abort.signal },
  );

  /** The destination's credit, handed on to the source as it comes. */
  const relayCredit = async (): Promise<void> => {
    for await (const event of destination.events) {
      if (failure) return;
      if (event.type !== 'credit') {
        fail(new LetKiteError('protocol_error', `the destination machine sent an unexpected ${event.type} frame`));
        return;
      }
      inFlight -= event.bytes;
      lastMove = Date.now();
      source.push({ type: 'credit', bytes: event.bytes });
    }
  };

  /** The source's records and data, passed on to the destination as they come (data frames without a copy). */
  const relayStream = async (): Promise<void> => {
    for await (const event of source.events) {
      if (failure) return;
      switch (event.type) {
        case 'data':
          if (!charge(event.bytes)) return;
          destination.push(event);
          progress.bytesDone += event.bytes;
          onProgress();
          break;
        case 'entry':
          if (!charge(STREAM_RECORD_COST)) return;
          if (event.entry.path === '') {
            progress.bytesTotal = event.entry.total_bytes ?? null;
            progress.filesTotal = event.entry.total_files ?? null;
          }
          destination.push(event);
          break;
        case 'entry_end':
          if (!charge(STREAM_RECORD_COST)) return;
          destination.push(event);
          progress.filesDone += 1;
          onProgress();
          break;
        case 'credit':
          fail(new LetKiteError('protocol_error', 'the source machine sent an unexpected credit frame'));
          return;
      }
    }
  };

  const credited = relayCredit().catch(fail);
  const sent = Promise.all([source.result, relayStream()]).then(
    ([from]) => {
      // Every event the source sent before its answer has been passed on: the destination's stream is complete.
      if (!failure) destination.push({ type: 'stream_end', sha256: from.sha256 });
      return from;
    },
    (err: unknown) => {
      fail(err);
      throw err;
    },
  );
  const received = destination.result.then(
    (to) => to,
    (err: unknown) => {
      fail(err);
      throw err;
    },
  );

  try {
    const [from, to] = await Promise.all([sent, received]);
    if (from.sha256 !== to.sha256 || from.kind !== to.kind) {
      throw new LetKiteError(
        'protocol_error',
        'checksum mismatch: the destination wrote something else than was sent',
        {
          source_sha256: from.sha256,
          destination_sha256: to.sha256,
        },
      );
    }
    return { bytes: to.bytes, files: to.files, sha256: to.sha256, skipped: [...from.skipped, ...to.skipped] };
  } catch (err) {
    // Wait for both sides to finish (the destination removes its temporary copy) before reporting.
    await Promise.allSettled([sent, received, credited]);
    throw failure ?? toLetKiteError(err);
  } finally {
    clearInterval(idle);
    signal.removeEventListener('abort', onOuterAbort);
  }
}
