import { join } from 'node:path';
import { openStore } from '@letkite/gateway';
import Database from 'better-sqlite3';
import { beforeEach, expect, test } from 'vitest';
import { runCli } from '../main';
import { runCaptured, tempDirEachTest } from '../testing';

const tmp = tempDirEachTest('letkite-admin-audit-');
let accountId: string;
beforeEach(async () => {
  const store = await openStore(join(tmp.path, 'letkite.db'));
  accountId = (await store.bootstrap('2026-06-01T00:00:00.000Z')).account.id;
  for (let i = 0; i < 4; i++) {
    await store.appendAudit({
      accountId,
      at: `2026-06-0${i + 2}T00:00:00.000Z`,
      actor: 'connection:con_1',
      action: 'tool.exec',
      machineId: 'mch_1',
      outcome: i === 3 ? 'blocked_by_policy' : 'ok',
      details: { arguments: { command: `echo ${i}` } },
    });
  }
  await store.close();
});

async function cli(...args: string[]) {
  return runCaptured((io) => runCli(['admin', 'audit', ...args, '--data', tmp.path], io));
}

function sqlite(sql: string, ...params: unknown[]): void {
  const db = new Database(join(tmp.path, 'letkite.db'));
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

test('verify exits 0 on a whole log and 1 naming the row after an edit in the database', async () => {
  const ok = await cli('verify');
  expect(ok.code).toBe(0);
  expect(ok.stdout).toContain('whole: 5 row(s)');
  sqlite(`UPDATE audit_events SET outcome = 'ok' WHERE id = 5`);
  const broken = await cli('verify');
  expect(broken.code).toBe(1);
  expect(broken.stdout).toContain('broken at row 5 (row_changed)');
});

test('verify names the row after a deleted one', async () => {
  sqlite('DELETE FROM audit_events WHERE id = 3');
  const broken = await cli('verify');
  expect(broken.code).toBe(1);
  expect(broken.stdout).toContain('broken at row 4 (chain_broken)');
});

test('export writes JSON lines oldest first within --since/--until, and CSV with a header', async () => {
  const jsonl = await cli('export', '--since', '2026-06-03', '--until', '2026-06-05T00:00:00Z', '--format', 'jsonl');
  expect(jsonl.code).toBe(0);
  const rows = jsonl.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: number; details: { arguments: { command: string } } });
  expect(rows.map((r) => r.details.arguments.command)).toEqual(['echo 1', 'echo 2']);
  const csv = await cli('export', '--format', 'csv', '--outcome', 'error');
  expect(csv.code).toBe(0);
  const lines = csv.stdout.trim().split('\r\n');
  expect(lines[0]).toMatch(/^id,at,actor,action,/);
  expect(lines).toHaveLength(2);
  expect(lines[1]).toContain('blocked_by_policy');
  // The export is itself in the log, and the log still verifies.
  expect((await cli('verify')).code).toBe(0);
  const all = await cli('export', '--action', 'audit.export');
  expect(all.stdout.trim().split('\n')).toHaveLength(3);
});

test('bad input is a usage error', async () => {
  const format = await cli('export', '--format', 'xml');
  expect(format.code).toBe(2);
  expect(format.stderr).toContain('--format "xml"');
  const since = await cli('export', '--since', 'yesterday');
  expect(since.code).toBe(2);
  expect(since.stderr).toContain('--since "yesterday"');
});

test('retention shows, sets (pruning at once, the chain still whole) and turns off; bad values are usage errors', async () => {
  expect((await cli('retention')).stdout).toContain('kept forever');
  const set = await cli('retention', '30');
  expect(set.code).toBe(0);
  // The rows of June 2026 are months old by the real clock: all pruned, and verify still passes from the anchor.
  expect(set.stdout).toMatch(/kept 30 day\(s\); [1-9]\d* older row\(s\) pruned/);
  expect((await cli('retention')).stdout).toContain('kept 30 day(s)');
  const verified = await cli('verify');
  expect(verified.code).toBe(0);
  expect(verified.stdout).toContain('the anchor left by pruning');
  expect((await cli('retention', 'off')).stdout).toContain('kept forever');
  expect((await cli('retention', '0')).code).toBe(2);
  expect((await cli('retention', 'soon')).code).toBe(2);
});
