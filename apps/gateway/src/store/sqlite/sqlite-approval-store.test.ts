import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { ApprovalBinding, ApprovalRequest } from '../../approvals/approval-store';
import { SqliteApprovalStore } from './sqlite-approval-store';
import { SqliteStore } from './sqlite-store';

/** Two store instances on one database file, as two gateways have. */
let dir: string;
let cores: SqliteStore[];
let stores: SqliteApprovalStore[];
let accountId: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lk-approvals-'));
  const file = join(dir, 'letkite.db');
  cores = [new SqliteStore(file), new SqliteStore(file)];
  stores = cores.map((c) => new SqliteApprovalStore(c));
  accountId = (await (cores[0] as SqliteStore).bootstrap(new Date().toISOString())).account.id;
});

afterEach(async () => {
  for (const c of cores) await c.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function binding(args = 'a'): ApprovalBinding {
  return { credentialId: 'tok_1', tool: 'exec', machineId: 'mach_1', argsHash: args, policyHash: 'p' };
}
function candidate(b: ApprovalBinding, expiresInMs = 60_000): ApprovalRequest {
  const now = Date.now();
  return {
    ...b,
    id: `apr_${++n}`,
    accountId,
    requesterId: 'usr_1',
    clientName: null,
    machineName: 'm',
    args: '{}',
    policyName: 'default',
    reason: { kind: 'policy' } as unknown as ApprovalRequest['reason'],
    approvers: 'others' as ApprovalRequest['approvers'],
    askedUserIds: [],
    status: 'pending',
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + expiresInMs).toISOString(),
    decidedAt: null,
    decidedBy: null,
    decidedWith: null,
    usedAt: null,
    proofBinding: null,
    passkeyOnly: false,
    assertion: null,
  };
}
const count = (q: string, ...p: unknown[]) =>
  ((cores[0] as SqliteStore).sqlite.prepare(q).get(...p) as { n: number }).n;

test('the database itself refuses a second pending request for one binding (a read that missed the first cannot add one)', async () => {
  const b = binding();
  await (stores[0] as SqliteApprovalStore).gate(b, candidate(b), 20, new Date().toISOString());
  const dup = candidate(b);
  expect(() =>
    (cores[1] as SqliteStore).sqlite
      .prepare(
        "INSERT INTO approval_requests (id, account_id, credential_id, requester_id, tool, machine_id, machine_name, args, args_hash, policy_hash, policy_name, reason, approvers, asked_user_ids, status, created_at, expires_at) VALUES (?, ?, 'tok_1', 'u', 'exec', 'mach_1', 'm', '{}', 'a', 'p', 'x', '{}', 'others', '[]', 'pending', ?, ?)",
      )
      .run(dup.id, accountId, dup.createdAt, dup.expiresAt),
  ).toThrow(/UNIQUE/);
});

test('the same call gated at two gateways at once asks once', async () => {
  const b = binding();
  const now = new Date().toISOString();
  const outcomes = await Promise.all(stores.map((s) => s.gate(b, candidate(b), 20, now)));
  expect(outcomes.filter((o) => o.kind === 'pending' && o.created)).toHaveLength(1);
  expect(count("SELECT count(*) AS n FROM approval_requests WHERE status = 'pending'")).toBe(1);
  expect(count("SELECT count(*) AS n FROM audit_events WHERE action = 'approval.request'")).toBe(1);
});

test('thirty different calls at two gateways at once stop at the limit of twenty pending', async () => {
  const now = new Date().toISOString();
  const outcomes = await Promise.all(
    Array.from({ length: 30 }, (_, i) => {
      const b = binding(`args-${i}`);
      return (stores[i % 2] as SqliteApprovalStore).gate(b, candidate(b), 20, now);
    }),
  );
  expect(outcomes.filter((o) => o.kind === 'too_many')).toHaveLength(10);
  expect(count("SELECT count(*) AS n FROM approval_requests WHERE status = 'pending'")).toBe(20);
});

test('two sweepers expire each request once: one audit row, one notification each', async () => {
  for (let i = 0; i < 5; i++) {
    const b = binding(`due-${i}`);
    await (stores[0] as SqliteApprovalStore).gate(b, candidate(b, -1), 20, new Date(Date.now() - 5_000).toISOString());
  }
  const now = new Date(Date.now() + 1_000).toISOString();
  const swept = await Promise.all([...stores, ...stores].map((s) => s.expireDue(now)));
  expect(swept.flat()).toHaveLength(5);
  expect(new Set(swept.flat().map((r) => r.id)).size).toBe(5);
  expect(count("SELECT count(*) AS n FROM audit_events WHERE action = 'approval.expire'")).toBe(5);
});

test('an expiry sweep does not expire a request decided since it was due', async () => {
  const b = binding('decided');
  const c = candidate(b, 1_000);
  await (stores[0] as SqliteApprovalStore).gate(b, c, 20, new Date().toISOString());
  const at = new Date().toISOString();
  const decided = await (stores[1] as SqliteApprovalStore).decide(
    c.id,
    { status: 'denied', by: 'usr_2', with: 'session', at },
    { accountId, at, actor: 'user:usr_2', action: 'approval.deny', target: c.id },
  );
  expect(decided?.status).toBe('denied');
  expect(await (stores[0] as SqliteApprovalStore).expireDue(new Date(Date.now() + 5_000).toISOString())).toEqual([]);
  expect(count("SELECT count(*) AS n FROM audit_events WHERE action = 'approval.expire'")).toBe(0);
});

test('two first starts at once keep one VAPID key pair and both answer it', async () => {
  let made = 0;
  const create = () => ({ publicKey: `pub-${++made}`, privateKey: `priv-${made}` });
  const keys = await Promise.all(stores.map((s) => s.vapidKeys(create, new Date().toISOString())));
  expect(keys[0]).toEqual(keys[1]);
  expect(count('SELECT count(*) AS n FROM push_vapid_keys')).toBe(1);
});

test('push failures recorded at two gateways at once are all counted', async () => {
  const now = new Date().toISOString();
  (cores[0] as SqliteStore).sqlite
    .prepare(
      "INSERT INTO push_subscriptions (id, account_id, user_id, endpoint, p256dh, auth, created_at) VALUES ('sub_1', ?, 'usr_1', 'https://push.test/1', 'k', 'a', ?)",
    )
    .run(accountId, now);
  await Promise.all([...stores, ...stores].map((s) => s.recordPushResult('sub_1', 'failed', now)));
  expect(count("SELECT failures AS n FROM push_subscriptions WHERE id = 'sub_1'")).toBe(4);
});

test('a gate or a decision does not expire other requests unannounced: the sweep that announces them finds them', async () => {
  const due = binding('due-elsewhere');
  const old = candidate(due, 1_000);
  await (stores[0] as SqliteApprovalStore).gate(due, old, 20, new Date().toISOString());
  const later = new Date(Date.now() + 5_000).toISOString();
  const other = binding('other');
  await (stores[1] as SqliteApprovalStore).gate(other, candidate(other), 20, later);
  await (stores[1] as SqliteApprovalStore).decide(
    'apr_none',
    { status: 'denied', by: 'usr_2', with: 'session', at: later },
    { accountId, at: later, actor: 'user:usr_2', action: 'approval.deny', target: 'apr_none' },
  );
  expect((await (stores[0] as SqliteApprovalStore).expireDue(later)).map((r) => r.id)).toEqual([old.id]);
});
