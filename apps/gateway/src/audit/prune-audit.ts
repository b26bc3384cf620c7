import type { Store } from '../store/types';

const DAY_MS = 86_400_000;

/**
 * Applies the account's retention: rows older than `retention_days` go, the chain's anchor moves to the last one
 * deleted (so `verify` still passes) and an `audit.prune` row records how many. Nothing happens without a
 * retention setting.
 */
export async function pruneByRetention(
  store: Pick<Store, 'getAuditRetention' | 'pruneAudit'>,
  accountId: string,
  now: Date,
): Promise<number> {
  const days = await store.getAuditRetention(accountId);
  if (days === null) return 0;
  const before = new Date(now.getTime() - days * DAY_MS).toISOString();
  const { pruned } = await store.pruneAudit(accountId, before, {
    accountId,
    at: now.toISOString(),
    actor: 'system',
    action: 'audit.prune',
    details: { retention_days: days },
  });
  return pruned;
}

/** How often the gateway applies retention. */
export const PRUNE_INTERVAL_MS = 3_600_000;
