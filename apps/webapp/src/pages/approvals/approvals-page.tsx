import { useEffect, useState } from 'react';
import { api } from '../../api';
import { Link } from '../../router';
import { ErrorNote, Page, useAction, useLoad, When } from '../../ui';
import { type ApprovalView, statusLabel } from './approval-types';
import { currentSubscription, pushSupported, subscribeToApprovals, unsubscribeFromApprovals } from './push';
import './approvals.css';

/** Turns approval notifications on or off for this browser. */
function PushToggle() {
  const [subscribed, setSubscribed] = useState<boolean | null>(null);
  const action = useAction();
  useEffect(() => {
    currentSubscription()
      .then((s) => setSubscribed(s !== null))
      .catch(() => setSubscribed(false));
  }, []);
  if (!pushSupported()) {
    return (
      <p className="hint">
        This browser cannot receive notifications (on a phone, add LetKite to the home screen first).
      </p>
    );
  }
  return (
    <div className="card push-toggle">
      <p>
        {subscribed
          ? 'This device gets a notification for each approval request.'
          : 'Get a notification on this device when an approval is needed.'}
      </p>
      <button
        type="button"
        disabled={action.busy || subscribed === null}
        onClick={() =>
          void action.run(async () => {
            if (subscribed) await unsubscribeFromApprovals();
            else await subscribeToApprovals();
            setSubscribed(!subscribed);
          })
        }
      >
        {subscribed ? 'Turn off notifications here' : 'Notify me on this device'}
      </button>
      <ErrorNote error={action.error} />
    </div>
  );
}

/** Approval requests of the account that the signed-in person may see, newest first. */
export default function ApprovalsPage() {
  const [filter, setFilter] = useState<'pending' | ''>('pending');
  const list = useLoad(() =>
    api<{ approvals: ApprovalView[] }>('GET', `/api/approvals${filter ? `?status=${filter}` : ''}`),
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload when the filter changes
  useEffect(() => list.reload(), [filter]);
  return (
    <Page title="Approvals" intro="Tool calls that wait for a person. Open one to see exactly what would run.">
      <PushToggle />
      <div className="tabs">
        <button
          type="button"
          className={filter === 'pending' ? 'tab active' : 'tab'}
          onClick={() => setFilter('pending')}
        >
          Waiting
        </button>
        <button type="button" className={filter === '' ? 'tab active' : 'tab'} onClick={() => setFilter('')}>
          All
        </button>
      </div>
      <ErrorNote error={list.error} />
      {list.data && list.data.approvals.length === 0 && <p className="hint">Nothing here.</p>}
      <ul className="list approvals-list">
        {list.data?.approvals.map((a) => (
          <li key={a.id} data-status={a.status}>
            <Link to={`/approvals/${a.id}`}>
              <b>{a.tool}</b> on {a.machine.name}
            </Link>
            <span>
              {statusLabel[a.status]} · {a.requester.name} · <When at={a.created_at} />
            </span>
          </li>
        ))}
      </ul>
    </Page>
  );
}
