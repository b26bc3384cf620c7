import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { AuditEventInput } from '../types';
import { SqliteStore } from './sqlite-store';

// claimTakeover keeps the pairs it has seen claimed in memory (no write transaction per exec afterwards). What that
// cache must never do: answer "already claimed" for a pair the database does not hold, or hide a claim made by
// another gateway on the same file.

let dir: string;
let file: string;
let a: SqliteStore;
let b: SqliteStore;
let accountId: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'letkite-takeover-'));
  file = join(dir, 'letkite.db');
  a = new SqliteStore(file);
  accountId = (await a.bootstrap('2026-01-01T00:00:00.000Z')).account.id;
  b = new SqliteStore(file);
});

afterEach(async () => {
  await a.close();
  await b.close();
  rmSync(dir, { recursive: true, force: true });
});

const notice = (machineId: string) => ({
  accountId,
  credentialId: 'con_1',
  machineId,
  userId: 'usr_1',
  tool: 'exec',
  at: '2026-01-02T00:00:00.000Z',
});
const audit = (machineId: string): AuditEventInput => ({
  accountId,
  at: '2026-01-02T00:00:00.000Z',
  actor: 'system',
  action: 'takeover.notice',
  target: 'usr_1',
  machineId,
  credentialId: 'con_1',
  details: {},
});

async function noticeRows(): Promise<number> {
  return (await a.listAudit(accountId, { limit: 100, action: 'takeover.notice' })).length;
}

test('a pair claimed once stays claimed, on this gateway and on another one on the same file', async () => {
  expect(await a.claimTakeoverNotice(notice('mch_a'), audit('mch_a'))).toBe(true);
  expect(await a.claimTakeoverNotice(notice('mch_a'), audit('mch_a'))).toBe(false);
  // The other gateway has no cache entry: the database answers.
  expect(await b.claimTakeoverNotice(notice('mch_a'), audit('mch_a'))).toBe(false);
  // Claimed first by the other gateway: this one's cache does not know it, the database does.
  expect(await b.claimTakeoverNotice(notice('mch_b'), audit('mch_b'))).toBe(true);
  expect(await a.claimTakeoverNotice(notice('mch_b'), audit('mch_b'))).toBe(false);
  expect(await a.claimTakeoverNotice(notice('mch_b'), audit('mch_b'))).toBe(false);
  expect(await noticeRows()).toBe(2);
});

test('a claim whose audit row failed is not remembered as claimed: the next call claims it', async () => {
  a.sqlite.exec(
    "CREATE TRIGGER no_audit BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit refused'); END",
  );
  await expect(a.claimTakeoverNotice(notice('mch_a'), audit('mch_a'))).rejects.toThrow(/audit refused/);
  a.sqlite.exec('DROP TRIGGER no_audit');
  expect(await a.claimTakeoverNotice(notice('mch_a'), audit('mch_a'))).toBe(true);
  expect(await noticeRows()).toBe(1);
});
