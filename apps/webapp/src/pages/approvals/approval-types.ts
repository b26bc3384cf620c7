import type { ApprovalStatus, ApprovalView } from '@letkite/protocol/api';

export type { ApprovalView };

export const statusLabel: Record<ApprovalStatus, string> = {
  pending: 'Waiting for a decision',
  approved: 'Approved (not used yet)',
  used: 'Approved and run',
  denied: 'Denied',
  expired: 'Expired',
};

/** "4 min 12 s" until `at`, or null once it is past. */
export function timeLeft(at: string, now: number): string | null {
  const ms = Date.parse(at) - now;
  if (ms <= 0) return null;
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h} h ${m} min`;
  return m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}

/**
 * What a request would do, in one line for lists: the command (a command line, or argv joined by spaces), else the
 * path or target it touches. Null when the arguments have none of these; the approval page shows them all anyway.
 */
export function approvalSubject(args: Record<string, unknown>): string | null {
  const { command, argv } = args;
  if (typeof command === 'string') return command;
  if (Array.isArray(argv) && argv.every((a) => typeof a === 'string')) return argv.join(' ');
  for (const key of ['path', 'target', 'to', 'app', 'mac']) {
    const v = args[key];
    if (typeof v === 'string') return v;
  }
  return null;
}
