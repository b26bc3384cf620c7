import type { AgentFrame } from '@letkite/protocol';

/** Largest piece of output in one chunk frame: 100k UTF-16 units stay under the 1 MiB frame even when escaped. */
export const CHUNK_CHARS = 100_000;

/** Sends `text` as `chunk` frames of request `id` on `stream`, never splitting a surrogate pair across frames. */
export function sendChunks(send: (f: AgentFrame) => void, id: string, stream: string, text: string): void {
  for (let i = 0; i < text.length; ) {
    let end = Math.min(text.length, i + CHUNK_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    send({ type: 'chunk', id, stream, data: text.slice(i, end) });
    i = end;
  }
}

/** A `chunks` op's output goes out as chunk frames on stdout and stderr before its result (exec, shell_run). */
export function withOutput<T extends { stdout: string; stderr: string }>(
  request: { id: string; send: (frame: AgentFrame) => void },
  output: T,
): Omit<T, 'stdout' | 'stderr'> {
  const { stdout, stderr, ...result } = output;
  sendChunks(request.send, request.id, 'stdout', stdout);
  sendChunks(request.send, request.id, 'stderr', stderr);
  return result;
}
