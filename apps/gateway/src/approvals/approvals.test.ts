import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { LocalCoordination } from '../coordination/local-coordination';
import { SqliteApprovalStore } from '../store/sqlite/sqlite-approval-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { ApprovalRequest } from './approval-store';
import { createApprovals } from './approvals';
import type { ApprovalNotifier } from './notify-approvers';

const dirs: string[] = [];
const cores: SqliteStore[] = [];
afterEach(async () => {
  for (const c of cores.splice(0)) await c.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test('two gateways sweeping and reading at once tell the requester of each expired request once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lk-expiry-'));
  dirs.push(dir);
  const file = join(dir, 'letkite.db');
  const settled: string[] = [];
  const woken: string[] = [];
  const gateways = [0, 1].map(() => {
    const core = new SqliteStore(file);
    cores.push(core);
    const approvals = createApprovals({
      store: new SqliteApprovalStore(core),
      coordination: new LocalCoordination(),
      now: () => new Date(),
      log: () => {},
      vapidSubject: 'mailto:x@y',
      allowInsecurePushLoopback: false,
      notifier: () =>
        ({
          requested: async () => {},
          settled: async (r: ApprovalRequest) => {
            settled.push(r.id);
          },
        }) as unknown as ApprovalNotifier,
    });
    for (let i = 0; i < 4; i++) approvals.events.onChange(`apr_${i}`, () => woken.push(`apr_${i}`));
    return { core, approvals };
  });
  const first = gateways[0] as (typeof gateways)[number];
  const accountId = (await first.core.bootstrap(new Date().toISOString())).account.id;
  const past = new Date(Date.now() - 60_000).toISOString();
  for (let i = 0; i < 4; i++) {
    first.core.sqlite
      .prepare(
        "INSERT INTO approval_requests (id, account_id, credential_id, requester_id, tool, machine_id, machine_name, args, args_hash, policy_hash, policy_name, reason, approvers, asked_user_ids, status, created_at, expires_at) VALUES (?, ?, 'tok_1', 'u', 'exec', 'mach_1', 'm', '{}', ?, 'p', 'x', '{}', 'others', '[]', 'pending', ?, ?)",
      )
      .run(`apr_${i}`, accountId, `args-${i}`, past, past);
  }
  const now = new Date().toISOString();
  await Promise.all(gateways.flatMap((g) => [g.approvals.store.expireDue(now), g.approvals.store.expireDue(now)]));
  await new Promise((r) => setTimeout(r, 20));
  expect(settled.sort()).toEqual(['apr_0', 'apr_1', 'apr_2', 'apr_3']);
  expect(woken.sort()).toEqual(['apr_0', 'apr_1', 'apr_2', 'apr_3']);
  const audits = first.core.sqlite
    .prepare("SELECT count(*) AS n FROM audit_events WHERE action = 'approval.expire'")
    .get() as { n: number };
  expect(audits.n).toBe(4);
});
