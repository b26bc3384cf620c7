import { LetKiteError } from '@letkite/protocol';
import type { Coordination } from '../coordination/coordination';
import type { Mailer } from '../notify/mailer';
import { PgApprovalStore } from '../store/postgres/pg-approval-store';
import { PgStore } from '../store/postgres/pg-store';
import { SqliteApprovalStore } from '../store/sqlite/sqlite-approval-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { Store } from '../store/types';
import type { ApprovalStore } from './approval-store';
import { type Approvals, createApprovals, vapidSubjectFor } from './approvals';
import { createApprovalNotifier } from './notify-approvers';

/**
 * The approvals dependencies on the core store's database (so an approval's change and its audit row share one
 * transaction), with e-mail through `mailer` and web push signed by the stored VAPID keys.
 */
export function openApprovals(options: {
  store: Store;
  coordination: Coordination;
  mailer: Mailer;
  mailFrom?: string | undefined;
  publicUrl: string;
  now: () => Date;
  log: (msg: string) => void;
  allowInsecurePushLoopback?: boolean;
}): Approvals {
  const { store } = options;
  let approvalStore: ApprovalStore;
  if (store instanceof SqliteStore) approvalStore = new SqliteApprovalStore(store);
  else if (store instanceof PgStore) approvalStore = new PgApprovalStore(store.database);
  else throw new LetKiteError('not_implemented', 'the approvals store exists only for SQLite and PostgreSQL');
  return createApprovals({
    store: approvalStore,
    coordination: options.coordination,
    now: options.now,
    log: options.log,
    vapidSubject: vapidSubjectFor(options.publicUrl, options.mailFrom),
    allowInsecurePushLoopback: options.allowInsecurePushLoopback ?? false,
    notifier: (push) =>
      createApprovalNotifier({
        mailer: options.mailer,
        store: approvalStore,
        push,
        users: async (ids) =>
          (await Promise.all([...new Set(ids)].map((id) => store.getUser(id)))).filter((u) => u !== null),
        publicUrl: options.publicUrl,
        now: options.now,
        log: options.log,
      }),
  });
}
