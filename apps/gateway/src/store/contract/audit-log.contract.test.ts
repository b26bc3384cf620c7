import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { auditRowHash, type ChainedRow, GENESIS_HASH } from '../audit-chain';
import type { AuditEventInput, AuditQuery, Store } from '../types';
import { type CoreInstances, coreBackends, storeProcess } from './core-backends';

/**
 * The activity log's contract (hash chain, tamper evidence, pruning with an anchor, filters, retention, takeover
 * claims) on SQLite and PostgreSQL. Tampering goes through raw SQL, as someone with database access would.
 * SQLite-only cases (sealing rows of an older file) stay in store/sqlite/sqlite-audit-log.test.ts.
 */

describe.each(coreBackends())('audit log on $name', (backend) => {
  let t: CoreInstances;
  let store: Store;
  let accountId: string;

  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    t = await backend.open();
    store = t.a;
    accountId = (await store.bootstrap('2026-01-01T00:00:00.000Z')).account.id;
  });
  afterEach(() => backend.close());

  const count = async (query: string, params: unknown[] = []) =>
    Number((await t.rows<{ n: number | string }>(query, params))[0]?.n);

  function event(i: number, extra: Partial<AuditEventInput> = {}): AuditEventInput {
    return {
      accountId,
      at: new Date(Date.UTC(2026, 0, 2, 0, i)).toISOString(),
      actor: 'connection:con_1',
      action: 'tool.exec',
      target: 'mch_a',
      decision: 'allow',
      outcome: 'ok',
      machineId: 'mch_a',
      userId: 'usr_1',
      clientName: 'claude-code',
      durationMs: 12.4,
      details: { arguments: { command: `echo ${i}` } },
      ...extra,
    };
  }

  test('every row names the hash of the one before it, per account, and the whole chain verifies', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await store.appendAudit(event(i)));
    const rows = await store.listAudit(accountId, { limit: 100, ascending: true });
    expect(rows).toHaveLength(6); // account.bootstrap first
    expect(rows[0]?.prevHash).toBe(GENESIS_HASH);
    for (let i = 1; i < rows.length; i++) expect(rows[i]?.prevHash).toBe(rows[i - 1]?.hash);
    expect(rows[1]).toMatchObject({ tool: 'exec', credentialId: 'con_1', machineId: 'mch_a', durationMs: 12 });
    expect(await store.verifyAudit(accountId)).toEqual({ ok: true, rows: 6, headId: ids[4], anchorId: null });
    // Another account's chain starts at the genesis hash of its own.
    await store.appendAudit({ ...event(9), accountId: 'acc_other' });
    const other = await store.listAudit('acc_other', { limit: 10 });
    expect(other[0]?.prevHash).toBe(GENESIS_HASH);
    expect((await store.verifyAudit(accountId)).ok).toBe(true);
  });

  test('three writers (two other processes and this one, on both instances) chain in one line', async () => {
    const body = `for (let i = 0; i < 150; i++) await store.appendAudit({ accountId: args[0], at: new Date().toISOString(),
        actor: 'system', action: 'audit.export', details: { who: args[1], i } });`;
    let childrenDone = false;
    let mineCount = 0;
    // This process keeps appending (alternating its two store instances) for as long as the children run, so
    // the writers really write at the same time.
    const mine = (async () => {
      while (!childrenDone || mineCount < 150) {
        await (mineCount % 2 === 0 ? t.a : t.b).appendAudit(event(mineCount++));
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    const children = await Promise.all(['a', 'b'].map((who) => storeProcess(t.location, body, [accountId, who])));
    childrenDone = true;
    await mine;
    for (const c of children) expect(c.code, c.out).toBe(0);
    const interleaved = await count(
      'SELECT count(*) AS n FROM audit_events a JOIN audit_events b ON b.id = a.id + 1 WHERE a.actor <> b.actor',
    );
    expect(interleaved).toBeGreaterThan(2);
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: true, rows: 301 + mineCount });
    expect(
      await count(
        'SELECT count(*) AS n FROM (SELECT prev_hash FROM audit_events GROUP BY prev_hash HAVING count(*) > 1) forks',
      ),
    ).toBe(0);
  }, 90_000);

  test('a prune racing appends on another instance leaves a chain that verifies from its anchor', async () => {
    for (let i = 0; i < 20; i++) await store.appendAudit(event(i));
    const appends = Promise.all(
      Array.from({ length: 30 }, (_, i) => t.b.appendAudit(event(i + 20, { at: '2026-03-01T00:00:00.000Z' }))),
    );
    const prune = store.pruneAudit(accountId, '2026-01-02T00:10:00.000Z', {
      accountId,
      at: '2026-03-01T00:00:00.000Z',
      actor: 'system',
      action: 'audit.prune',
    });
    const [, { pruned }] = await Promise.all([appends, prune]);
    expect(pruned).toBe(11); // the bootstrap row and 00:00 … 00:09
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: true, rows: 10 + 30 + 1 });
  });

  test('an edited row is named: its hash no longer matches what it says', async () => {
    for (let i = 0; i < 4; i++) await store.appendAudit(event(i));
    const [victim] = await store.listAudit(accountId, { limit: 1, beforeId: 4 });
    await t.exec(`UPDATE audit_events SET details = '{"arguments":{"command":"true"}}' WHERE id = ?`, [victim?.id]);
    expect(await store.verifyAudit(accountId)).toMatchObject({
      ok: false,
      brokenId: victim?.id,
      reason: 'row_changed',
    });
  });

  test('an edit that recomputes the row hash still breaks the link to the next row', async () => {
    for (let i = 0; i < 4; i++) await store.appendAudit(event(i));
    const [r] = await store.listAudit(accountId, { limit: 1, afterId: 2, ascending: true });
    if (!r?.prevHash) throw new Error('row 3 missing');
    const forged: ChainedRow = { ...r, prevHash: r.prevHash, details: '{"arguments":{"command":"true"}}' };
    await t.exec('UPDATE audit_events SET details = ?, hash = ? WHERE id = 3', [forged.details, auditRowHash(forged)]);
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: false, brokenId: 4, reason: 'chain_broken' });
  });

  test('a deleted row is found at the row after the gap', async () => {
    for (let i = 0; i < 5; i++) await store.appendAudit(event(i));
    await t.exec('DELETE FROM audit_events WHERE id = 3');
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: false, brokenId: 4, reason: 'chain_broken' });
  });

  test('deleting the newest rows is found: the chain ends before its recorded head', async () => {
    for (let i = 0; i < 5; i++) await store.appendAudit(event(i));
    await t.exec('DELETE FROM audit_events WHERE id >= 5');
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: false, brokenId: 6, reason: 'head_mismatch' });
  });

  test('an inserted row is found, even one with a correctly computed hash of its own', async () => {
    for (let i = 0; i < 3; i++) await store.appendAudit(event(i));
    await t.exec(
      `INSERT INTO audit_events (id, account_id, at, actor, action, details, prev_hash, hash)
       VALUES (100, ?, '2026-01-03T00:00:00.000Z', 'user:usr_x', 'member.remove', '{}', 'abc', 'def')`,
      [accountId],
    );
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: false, brokenId: 100 });
  });

  test('pruning keeps the rest verifiable from its anchor, and later edits are still found', async () => {
    for (let i = 0; i < 6; i++) await store.appendAudit(event(i));
    // Rows at 00:00 … 00:05 on Jan 2 (and the bootstrap on Jan 1): cut before 00:03.
    const { pruned } = await store.pruneAudit(accountId, '2026-01-02T00:03:00.000Z', {
      accountId,
      at: '2026-01-10T00:00:00.000Z',
      actor: 'system',
      action: 'audit.prune',
    });
    expect(pruned).toBe(4);
    const v = await store.verifyAudit(accountId);
    expect(v).toMatchObject({ ok: true, rows: 4, anchorId: 4 });
    const rows = await store.listAudit(accountId, { limit: 10, ascending: true });
    expect(rows.map((r) => r.id)).toEqual([5, 6, 7, 8]);
    expect(rows.at(-1)).toMatchObject({ action: 'audit.prune', details: { pruned: 4 } });
    await t.exec('DELETE FROM audit_events WHERE id = 5');
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: false, brokenId: 6, reason: 'chain_broken' });
  });

  test('pruning everything leaves an anchor the next row chains from', async () => {
    await store.appendAudit(event(0));
    await store.pruneAudit(accountId, '2030-01-01T00:00:00.000Z', {
      accountId,
      at: '2030-01-01T00:00:00.000Z',
      actor: 'system',
      action: 'audit.prune',
    });
    await store.appendAudit(event(1));
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: true, rows: 2, anchorId: 2 });
  });

  test('filters narrow by tool, machine, person, connection, outcome and time; the cursor pages by id', async () => {
    await store.appendAudit(event(1));
    await store.appendAudit(event(2, { action: 'tool.write_file', machineId: 'mch_b', outcome: 'blocked_by_policy' }));
    await store.appendAudit(event(3, { actor: 'token:tok_9', userId: 'usr_2', outcome: 'approval_pending' }));
    await store.appendAudit({
      accountId,
      at: '2026-01-02T00:04:00.000Z',
      actor: 'user:usr_2',
      action: 'member.remove',
    });
    await store.appendAudit({
      accountId,
      at: '2026-01-02T00:05:00.000Z',
      actor: 'system',
      action: 'takeover.notice',
      tool: 'exec',
    });
    const ids = async (q: Partial<AuditQuery>) =>
      (await store.listAudit(accountId, { limit: 50, ...q })).map((r) => r.id);
    expect(await ids({ tool: 'write_file' })).toEqual([3]);
    expect(await ids({ machineId: 'mch_a' })).toEqual([4, 2]);
    expect(await ids({ userId: 'usr_2' })).toEqual([5, 4]);
    expect(await ids({ credentialId: 'tok_9' })).toEqual([4]);
    expect(await ids({ outcome: 'error' })).toEqual([3]);
    expect(await ids({ toolCalls: true })).toEqual([4, 3, 2]);
    expect(await ids({ tool: 'exec', toolCalls: true })).toEqual([4, 2]);
    expect(await ids({ action: 'member.remove' })).toEqual([5]);
    expect(await ids({ since: '2026-01-02T00:02:00.000Z', until: '2026-01-02T00:04:00.000Z' })).toEqual([4, 3]);
    expect(await ids({ limit: 2 })).toEqual([6, 5]);
    expect(await ids({ limit: 2, beforeId: 4 })).toEqual([3, 2]);
    expect(await ids({ afterId: 3, ascending: true })).toEqual([4, 5, 6]);
  });

  test('retention is stored per account and written to the log', async () => {
    expect(await store.getAuditRetention(accountId)).toBeNull();
    await store.setAuditRetention(accountId, 30, {
      accountId,
      at: '2026-01-05T00:00:00.000Z',
      actor: 'user:usr_1',
      action: 'audit.retention',
      details: { retention_days: 30 },
    });
    expect(await store.getAuditRetention(accountId)).toBe(30);
    expect((await store.listAudit(accountId, { limit: 1 }))[0]?.action).toBe('audit.retention');
    expect((await store.verifyAudit(accountId)).ok).toBe(true);
  });

  test('a takeover notice is claimed once per connection and machine, with one audit row', async () => {
    const n = { accountId, credentialId: 'con_1', machineId: 'mch_a', userId: 'usr_1', tool: 'exec', at: 'x' };
    const audit = { accountId, at: 'x', actor: 'system', action: 'takeover.notice', machineId: 'mch_a' };
    const results = await Promise.all([store.claimTakeoverNotice(n, audit), store.claimTakeoverNotice(n, audit)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.listAudit(accountId, { limit: 10, action: 'takeover.notice' })).toHaveLength(1);
    expect(await store.claimTakeoverNotice({ ...n, machineId: 'mch_b' }, audit)).toBe(true);
    expect(await store.claimTakeoverNotice({ ...n, credentialId: 'con_2' }, audit)).toBe(true);
    expect(await store.listAudit(accountId, { limit: 10, action: 'takeover.notice' })).toHaveLength(3);
  });
});
