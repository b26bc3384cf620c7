import type { FileRule } from '@letkite/policy';

/** A file operation handed to the worker that runs as the run-as account. */
export interface WorkerRequest {
  id: number;
  op: string;
  params: unknown;
  reach: { layers: FileRule[][]; deny: string[]; home: string; protectedPaths?: string[] };
  limits: { maxReadBytes: number; maxWriteBytes: number };
}

export type WorkerResponse =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { code: string; message: string; details?: Record<string, unknown> } };
