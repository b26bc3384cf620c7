import type { AuditEventView } from '@letkite/protocol/api';
import { expect, test } from 'vitest';
import { filtersFrom, searchOf } from './activity-filters';
import { callsPerHour } from './calls-chart';

test('filters read from the URL drop unknown keys and empty values, and write back in a stable order', () => {
  const f = filtersFrom('?tool=exec&evil=1&machine=&action=tool&since=2026-01-01T00:00:00.000Z');
  expect(f).toEqual({ tool: 'exec', action: 'tool', since: '2026-01-01T00:00:00.000Z' });
  expect(searchOf(f)).toBe('?since=2026-01-01T00%3A00%3A00.000Z&tool=exec&action=tool');
  expect(searchOf({})).toBe('');
});

function row(at: string, outcome: string | null, action = 'tool.exec'): AuditEventView {
  return {
    id: 1,
    at,
    actor: 'token:t',
    action,
    target: null,
    decision: null,
    outcome,
    user_id: null,
    user_name: null,
    tool: action.startsWith('tool.') ? action.slice(5) : null,
    machine_id: null,
    machine_name: null,
    credential_id: null,
    client_name: null,
    request_id: null,
    duration_ms: null,
    details: {},
    hash: null,
    prev_hash: null,
  };
}

test('calls per hour count tool calls of the last 24 hours by outcome, and nothing else', () => {
  const now = new Date('2026-06-01T12:30:00Z');
  const buckets = callsPerHour(
    [
      row('2026-06-01T12:10:00Z', 'ok'),
      row('2026-06-01T12:20:00Z', 'blocked_by_policy'),
      row('2026-06-01T11:59:00Z', 'approval_pending'),
      row('2026-06-01T12:00:00Z', 'ok', 'member.remove'),
      row('2026-05-30T12:00:00Z', 'ok'),
    ],
    now,
  );
  expect(buckets).toHaveLength(24);
  expect(buckets.at(-1)).toMatchObject({ ok: 1, refused: 1, pending: 0 });
  expect(buckets.at(-2)).toMatchObject({ ok: 0, refused: 0, pending: 1 });
  expect(buckets.reduce((n, b) => n + b.ok + b.pending + b.refused, 0)).toBe(3);
});
