import { approvalEndpoints } from '@letkite/protocol/api';
import { useEffect, useState } from 'react';
import { useApiQuery } from '../../queries';
import { Link } from '../../router';
import { ErrorNote, errorText, Page, useAction, When } from '../../ui';
import { VisibleText } from '../../visible-value';
import { approvalSubject, statusLabel } from './approval-types';
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
  // Each filter is its own cached query: switching tabs shows the last answer at once and refetches behind it.
  const list = useApiQuery(approvalEndpoints.list, filter ? { status: filter } : {}, { refetchInterval: 15_000 });
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
      <ErrorNote error={errorText(list.error)} />
      {list.data && list.data.approvals.length === 0 && <p className="hint">Nothing here.</p>}
      <ul className="list approvals-list">
        {list.data?.approvals.map((a) => {
          const subject = approvalSubject(a.args);
          return (
            <li key={a.id} data-status={a.status} data-testid="approval-row">
              <span className="approval-summary">
                <Link to={`/approvals/${a.id}`}>
                  <b data-testid="approval-tool">{a.tool}</b> on{' '}
                  <span data-testid="approval-machine">
                    <VisibleText text={a.machine.name} />
                  </span>
                </Link>
                {subject !== null && (
                  <code className="subject" data-testid="approval-command">
                    <VisibleText text={subject} />
                  </code>
                )}
              </span>
              <span className="hint">
                {statusLabel[a.status]}
                {a.status === 'pending' && a.can_decide && <strong> · waiting for you</strong>} · {a.requester.name} ·{' '}
                <When at={a.created_at} />
              </span>
            </li>
          );
        })}
      </ul>
    </Page>
  );
}
