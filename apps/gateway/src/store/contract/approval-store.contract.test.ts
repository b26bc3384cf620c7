import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { ApprovalBinding, ApprovalRequest, ApprovalStore } from '../../approvals/approval-store';
import { PgApprovalStore } from '../postgres/pg-approval-store';
import { SqliteApprovalStore } from '../sqlite/sqlite-approval-store';
import { type TwoInstances, twoInstanceBackends } from './two-instance-backends';

/**
 * The ApprovalStore contract, run against every implementation with two store instances on one database, as two
 * gateways have them (two-instance-backends.ts): SQLite on a temp file (two connections), PostgreSQL on one test
 * database (two pools), emptied before each case. Raw SQL (`?` placeholders on both) seeds rows and reads what a
 * change wrote.
 */
const backends = twoInstanceBackends<ApprovalStore>({
  sqlite: (core) => new SqliteApprovalStore(core),
  postgres: (database) => new PgApprovalStore(database),
  // Every case starts without requests, challenges, subscriptions, keys or audit rows (its own database on SQLite).
  truncate: [
    'approval_requests',
    'approval_gate_locks',
    'approval_challenges',
    'push_subscriptions',
    'push_vapid_keys',
    'audit_events',
    'audit_chains',
  ],
});

const accountId = 'acc_1';
let n = 0;
function binding(args = 'a', credentialId = 'tok_1'): ApprovalBinding {
  return { credentialId, tool: 'exec', machineId: 'mach_1', argsHash: args, policyHash: 'p' };
}
function candidate(b: ApprovalBinding, expiresInMs = 60_000, now = Date.now()): ApprovalRequest {
  return {
    ...b,
    id: `apr_${++n}_${Math.random().toString(16).slice(2)}`,
    accountId,
    requesterId: 'usr_1',
    clientName: 'Claude',
    machineName: 'm',
    args: '{"command":"ls"}',
    policyName: 'default',
    reason: { kind: 'policy' } as unknown as ApprovalRequest['reason'],
    approvers: 'others' as ApprovalRequest['approvers'],
    askedUserIds: ['usr_2'],
    status: 'pending',
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + expiresInMs).toISOString(),
    decidedAt: null,
    decidedBy: null,
    decidedWith: null,
    usedAt: null,
    proofBinding: '{"v":1}',
    passkeyOnly: true,
    assertion: null,
  };
}
const decision = (at: string, status: 'approved' | 'denied' = 'approved') => ({
  status,
  by: 'usr_2',
  with: 'session' as const,
  at,
});
const decisionAudit = (id: string, at: string) => ({
  accountId,
  at,
  actor: 'user:usr_2',
  action: 'approval.approve',
  target: id,
});

describe.each(backends)('ApprovalStore on $name', (backend) => {
  let env: TwoInstances<ApprovalStore>;
  let s0: ApprovalStore;
  let s1: ApprovalStore;

  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    env = await backend.open();
    s0 = env.a;
    s1 = env.b;
  });
  afterEach(() => backend.close());
  /** The `n` column of a query's first row (PostgreSQL answers count(*) as text). */
  const count = async (query: string, params?: unknown[]) =>
    Number((await env.rows<{ n: number | string }>(query, params))[0]?.n);

  const countStatus = (status: string) =>
    count('SELECT count(*) AS n FROM approval_requests WHERE status = ?', [status]);
  const countAudit = (action: string) => count('SELECT count(*) AS n FROM audit_events WHERE action = ?', [action]);

  test('a request reads back as it was stored; list filters by status, newest first', async () => {
    const b = binding('rt');
    const c = candidate(b);
    const outcome = await s0.gate(b, c, 20, new Date().toISOString());
    expect(outcome).toEqual({ kind: 'pending', request: c, created: true, previous: null });
    expect(await s1.get(c.id)).toEqual(c);
    expect(await s1.get('apr_none')).toBeNull();
    const later = candidate(binding('rt2'), 60_000, Date.now() + 1_000);
    await s1.gate(binding('rt2'), later, 20, new Date().toISOString());
    expect((await s0.list(accountId, { limit: 10 })).map((r) => r.id)).toEqual([later.id, c.id]);
    expect(await s0.list(accountId, { status: 'approved', limit: 10 })).toEqual([]);
    expect(await s0.list(accountId, { limit: 1 })).toHaveLength(1);
    expect(await countAudit('approval.request')).toBe(2);
  });

  test('the database itself refuses a second pending request for one binding (a read that missed the first cannot add one)', async () => {
    const b = binding();
    await s0.gate(b, candidate(b), 20, new Date().toISOString());
    const dup = candidate(b);
    await expect(
      env.exec(
        "INSERT INTO approval_requests (id, account_id, credential_id, requester_id, tool, machine_id, machine_name, args, args_hash, policy_hash, policy_name, reason, approvers, asked_user_ids, status, created_at, expires_at) VALUES (?, ?, 'tok_1', 'u', 'exec', 'mach_1', 'm', '{}', 'a', 'p', 'x', '{}', 'others', '[]', 'pending', ?, ?)",
        [dup.id, accountId, dup.createdAt, dup.expiresAt],
      ),
    ).rejects.toThrow(/UNIQUE|unique/);
  });

  test('the same call gated ten times at two gateways at once asks once', async () => {
    const b = binding();
    const now = new Date().toISOString();
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? s1 : s0).gate(b, candidate(b), 20, now)),
    );
    const created = outcomes.filter((o) => o.kind === 'pending' && o.created);
    expect(created).toHaveLength(1);
    const id = created[0]?.kind === 'pending' ? created[0].request.id : '';
    // Every caller waits on the one request.
    expect(outcomes.every((o) => o.kind === 'pending' && o.request.id === id)).toBe(true);
    expect(await countStatus('pending')).toBe(1);
    expect(await countAudit('approval.request')).toBe(1);
  });

  test('thirty different calls of one credential at two gateways at once (2 × 15) stop at the limit of twenty pending', async () => {
    const now = new Date().toISOString();
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const b = binding(`args-${i}`);
        return (i % 2 ? s1 : s0).gate(b, candidate(b), 20, now);
      }),
    );
    expect(outcomes.filter((o) => o.kind === 'too_many')).toHaveLength(10);
    expect(outcomes.filter((o) => o.kind === 'pending' && o.created)).toHaveLength(20);
    expect(await countStatus('pending')).toBe(20);
    expect(await countAudit('approval.request')).toBe(20);
    // The limit is per credential: another one still asks.
    const other = binding('args-0', 'tok_2');
    expect((await s0.gate(other, candidate(other), 20, now)).kind).toBe('pending');
  });

  test('an approval is used by exactly one of ten identical calls at two gateways; the next call asks again', async () => {
    const b = binding('use');
    const c = candidate(b);
    await s0.gate(b, c, 20, new Date().toISOString());
    const at = new Date().toISOString();
    expect((await s1.decide(c.id, decision(at), decisionAudit(c.id, at)))?.status).toBe('approved');
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? s1 : s0).gate(b, candidate(b), 20, new Date().toISOString())),
    );
    const consumed = outcomes.filter((o) => o.kind === 'consumed');
    expect(consumed).toHaveLength(1);
    expect(consumed[0]?.kind === 'consumed' && consumed[0].request.id).toBe(c.id);
    // The other nine found the approval used and asked again, once between them.
    expect(outcomes.filter((o) => o.kind === 'pending' && o.created)).toHaveLength(1);
    const again = outcomes.find((o) => o.kind === 'pending' && o.created);
    expect(again?.kind === 'pending' && again.previous?.id).toBe(c.id);
    expect(await countAudit('approval.use')).toBe(1);
    expect((await s0.get(c.id))?.status).toBe('used');
  });

  test('a denial answers every later call for the binding', async () => {
    const b = binding('deny');
    const c = candidate(b);
    await s0.gate(b, c, 20, new Date().toISOString());
    const at = new Date().toISOString();
    await s1.decide(c.id, decision(at, 'denied'), decisionAudit(c.id, at));
    const outcome = await s1.gate(b, candidate(b), 20, new Date().toISOString());
    expect(outcome.kind === 'denied' && outcome.request.id).toBe(c.id);
  });

  test('two approvers deciding at once: one decision counts, the other finds it decided', async () => {
    const b = binding('race');
    const c = candidate(b);
    await s0.gate(b, c, 20, new Date().toISOString());
    const at = new Date().toISOString();
    const results = await Promise.all([
      s0.decide(c.id, decision(at, 'approved'), decisionAudit(c.id, at)),
      s1.decide(c.id, decision(at, 'denied'), decisionAudit(c.id, at)),
    ]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    const winner = results.find((r) => r !== null);
    expect((await s0.get(c.id))?.status).toBe(winner?.status);
    expect(await countAudit('approval.approve')).toBe(1);
    // The audit row of the decision carries the request's details merged with the caller's.
    expect(
      await count("SELECT count(*) AS n FROM audit_events WHERE action = 'approval.approve' AND details LIKE ?", [
        '%"args_sha256":"race"%',
      ]),
    ).toBe(1);
  });

  test('an expired request cannot be decided', async () => {
    const b = binding('late');
    const c = candidate(b, 1_000);
    await s0.gate(b, c, 20, new Date().toISOString());
    const at = new Date(Date.now() + 5_000).toISOString();
    expect(await s1.decide(c.id, decision(at), decisionAudit(c.id, at))).toBeNull();
    expect((await s0.get(c.id))?.status).toBe('pending');
  });

  test('sweepers at two gateways expire each request once: one audit row, one notification each', async () => {
    const past = Date.now() - 5_000;
    for (let i = 0; i < 5; i++) {
      const b = binding(`due-${i}`);
      await s0.gate(b, candidate(b, 1_000, past), 20, new Date(past).toISOString());
    }
    // An approved request past its expiry expires too (its approval was never used).
    const approvedB = binding('due-approved');
    const approved = candidate(approvedB, 2_000, past);
    await s0.gate(approvedB, approved, 20, new Date(past).toISOString());
    const decidedAt = new Date(past + 500).toISOString();
    await s0.decide(approved.id, decision(decidedAt), decisionAudit(approved.id, decidedAt));
    const now = new Date(Date.now() + 1_000).toISOString();
    const swept = await Promise.all([s0, s1, s0, s1, s0, s1].map((s) => s.expireDue(now)));
    expect(swept.flat()).toHaveLength(6);
    expect(new Set(swept.flat().map((r) => r.id)).size).toBe(6);
    expect(swept.flat().every((r) => r.status === 'expired')).toBe(true);
    expect(await countAudit('approval.expire')).toBe(6);
    expect(await countStatus('expired')).toBe(6);
    expect(await s1.expireDue(now)).toEqual([]);
  });

  test('an expiry sweep does not expire a request decided since it was due', async () => {
    const b = binding('decided');
    const c = candidate(b, 1_000);
    await s0.gate(b, c, 20, new Date().toISOString());
    const at = new Date().toISOString();
    const decided = await s1.decide(c.id, decision(at, 'denied'), {
      accountId,
      at,
      actor: 'user:usr_2',
      action: 'approval.deny',
      target: c.id,
    });
    expect(decided?.status).toBe('denied');
    expect(await s0.expireDue(new Date(Date.now() + 5_000).toISOString())).toEqual([]);
    expect(await countAudit('approval.expire')).toBe(0);
  });

  test('a gate or a decision does not expire other requests unannounced: the sweep that announces them finds them', async () => {
    const due = binding('due-elsewhere');
    const old = candidate(due, 1_000);
    await s0.gate(due, old, 20, new Date().toISOString());
    const later = new Date(Date.now() + 5_000).toISOString();
    const other = binding('other');
    await s1.gate(other, candidate(other), 20, later);
    await s1.decide(
      'apr_none',
      { status: 'denied', by: 'usr_2', with: 'session', at: later },
      { accountId, at: later, actor: 'user:usr_2', action: 'approval.deny', target: 'apr_none' },
    );
    expect((await s0.expireDue(later)).map((r) => r.id)).toEqual([old.id]);
  });

  test('a gate expires its own binding’s due request and asks again, naming the expired one', async () => {
    const b = binding('again');
    const old = candidate(b, 1_000);
    await s0.gate(b, old, 20, new Date().toISOString());
    const later = new Date(Date.now() + 5_000).toISOString();
    const outcome = await s1.gate(b, candidate(b), 20, later);
    expect(outcome.kind === 'pending' && outcome.created).toBe(true);
    expect(outcome.kind === 'pending' && outcome.previous?.id).toBe(old.id);
    expect((await s0.get(old.id))?.status).toBe('expired');
  });

  test('a passkey challenge is taken once, only for its approval and person, only before it expires', async () => {
    const b = binding('challenge');
    const c = candidate(b);
    await s0.gate(b, c, 20, new Date().toISOString());
    const now = new Date();
    const expiresAt = new Date(now.getTime() + 60_000).toISOString();
    await s0.putChallenge({
      challenge: 'ch1',
      approvalId: c.id,
      userId: 'usr_2',
      createdAt: now.toISOString(),
      expiresAt,
    });
    const at = new Date().toISOString();
    expect(await s1.takeChallenge('ch1', c.id, 'usr_3', at)).toBe(false);
    expect(await s1.takeChallenge('ch1', 'apr_other', 'usr_2', at)).toBe(false);
    expect(await s1.takeChallenge('ch1', c.id, 'usr_2', new Date(now.getTime() + 120_000).toISOString())).toBe(false);
    const takes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? s1 : s0).takeChallenge('ch1', c.id, 'usr_2', at)),
    );
    expect(takes.filter(Boolean)).toHaveLength(1);
    // Asking again renews the bound challenge, usable once more.
    await s1.putChallenge({ challenge: 'ch1', approvalId: c.id, userId: 'usr_2', createdAt: at, expiresAt });
    expect(await s0.takeChallenge('ch1', c.id, 'usr_2', at)).toBe(true);
  });

  test('a challenge bound to one person is not renewed for another', async () => {
    const b = binding('challenge-2');
    const c = candidate(b);
    await s0.gate(b, c, 20, new Date().toISOString());
    const at = new Date().toISOString();
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    await s0.putChallenge({ challenge: 'ch2', approvalId: c.id, userId: 'usr_2', createdAt: at, expiresAt });
    expect(await s0.takeChallenge('ch2', c.id, 'usr_2', at)).toBe(true);
    await s1.putChallenge({ challenge: 'ch2', approvalId: c.id, userId: 'usr_3', createdAt: at, expiresAt });
    expect(await s1.takeChallenge('ch2', c.id, 'usr_3', at)).toBe(false);
    expect(await s1.takeChallenge('ch2', c.id, 'usr_2', at)).toBe(false);
  });

  test('two first starts at once keep one VAPID key pair and both answer it', async () => {
    let made = 0;
    const create = () => ({ publicKey: `pub-${++made}`, privateKey: `priv-${made}` });
    const keys = await Promise.all([s0, s1, s0, s1].map((s) => s.vapidKeys(create, new Date().toISOString())));
    for (const k of keys) expect(k).toEqual(keys[0]);
    expect(await count('SELECT count(*) AS n FROM push_vapid_keys')).toBe(1);
    // Later starts keep the pair and make no new one.
    const before = made;
    expect(await s1.vapidKeys(create, new Date().toISOString())).toEqual(keys[0]);
    expect(made).toBe(before);
  });

  test('push subscriptions: one row per endpoint, re-subscribing replaces it, results are recorded', async () => {
    const at = new Date().toISOString();
    const sub = (id: string, userId: string) => ({
      id,
      accountId,
      userId,
      endpoint: 'https://push.test/1',
      p256dh: `k-${id}`,
      auth: `a-${id}`,
      userAgent: null,
      createdAt: at,
    });
    const subAudit = (action: string) => ({ accountId, at, actor: 'user:usr_1', action });
    await s0.savePushSubscription(sub('sub_1', 'usr_1'), subAudit('push.subscribe'));
    await s0.recordPushResult('sub_1', 'failed', at);
    // The same browser profile subscribes again, as someone else, at two gateways at once.
    await Promise.all([
      s0.savePushSubscription(sub('sub_2', 'usr_2'), subAudit('push.subscribe')),
      s1.savePushSubscription(sub('sub_3', 'usr_2'), subAudit('push.subscribe')),
    ]);
    expect(await s1.pushSubscriptionsOf(['usr_1'])).toEqual([]);
    const now = await s1.pushSubscriptionsOf(['usr_1', 'usr_2']);
    expect(now).toHaveLength(1);
    expect(['sub_2', 'sub_3']).toContain(now[0]?.id);
    expect(now[0]?.p256dh).toBe(`k-${now[0]?.id}`);
    expect(await count("SELECT failures AS n FROM push_subscriptions WHERE endpoint = 'https://push.test/1'")).toBe(0);
    expect(await countAudit('push.subscribe')).toBe(3);
    expect(await s0.pushSubscriptionsOf([])).toEqual([]);
    const id = now[0]?.id ?? '';
    expect(await s0.deletePushSubscription('usr_1', 'https://push.test/1', subAudit('push.unsubscribe'))).toBe(false);
    await s1.recordPushResult(id, 'gone', at);
    expect(await s0.pushSubscriptionsOf(['usr_2'])).toEqual([]);
    await s0.savePushSubscription(sub('sub_4', 'usr_2'), subAudit('push.subscribe'));
    expect(await s0.deletePushSubscription('usr_2', 'https://push.test/1', subAudit('push.unsubscribe'))).toBe(true);
    expect(await countAudit('push.unsubscribe')).toBe(1);
  });

  test('push failures recorded at two gateways at once are all counted; a success resets them', async () => {
    const now = new Date().toISOString();
    await env.exec(
      "INSERT INTO push_subscriptions (id, account_id, user_id, endpoint, p256dh, auth, created_at) VALUES ('sub_1', ?, 'usr_1', 'https://push.test/1', 'k', 'a', ?)",
      [accountId, now],
    );
    await Promise.all([s0, s1, s0, s1, s0, s1].map((s) => s.recordPushResult('sub_1', 'failed', now)));
    expect(await count("SELECT failures AS n FROM push_subscriptions WHERE id = 'sub_1'")).toBe(6);
    await s1.recordPushResult('sub_1', 'ok', now);
    expect(await count("SELECT failures AS n FROM push_subscriptions WHERE id = 'sub_1'")).toBe(0);
    expect(
      await count("SELECT count(*) AS n FROM push_subscriptions WHERE id = 'sub_1' AND last_success_at = ?", [now]),
    ).toBe(1);
  });
});
