import { approvalEndpoints } from '@letkite/protocol/api';
import { useApiQuery } from './queries';

/** How often the navigation re-counts the approvals waiting for the signed-in person. */
const APPROVALS_POLL_MS = 15_000;

/**
 * Approvals waiting for a decision the signed-in person may make now (`can_decide`), newest first. The navigation
 * badge and the overview share this one cached query.
 */
export function useWaitingApprovals() {
  const query = useApiQuery(approvalEndpoints.list, { status: 'pending' }, { refetchInterval: APPROVALS_POLL_MS });
  const waiting = query.data?.approvals.filter((a) => a.can_decide && a.status === 'pending') ?? [];
  return { waiting, query };
}
