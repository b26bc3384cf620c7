import { type ApprovalView, connectionEndpoints, type MachineView, machineListEndpoints } from '@letkite/protocol/api';
import { can } from '../api';
import { useApiQuery } from '../queries';
import { Link } from '../router';
import { useSession } from '../session';
import { ErrorNote, errorText, Page, When } from '../ui';
import { VisibleText } from '../visible-value';
import { useWaitingApprovals } from '../waiting-approvals';
import { approvalSubject } from './approvals/approval-types';
import { RecentActivity } from './overview-activity';

/**
 * The first page after sign-in: which machines are up, what waits for me, what the AIs did lately, and who is
 * connected. Machine names, host names and client names come from agents and clients: shown with every invisible
 * or direction-changing character made visible.
 */
export default function OverviewPage() {
  const { session } = useSession();
  const machines = useApiQuery(machineListEndpoints.list);
  const connections = useApiQuery(connectionEndpoints.list);
  const { waiting, query: approvals } = useWaitingApprovals();
  const list = machines.data?.machines ?? [];
  const online = list.filter((m) => m.online);
  return (
    <Page title="Overview">
      <div className="stats">
        <Link to="/machines" className="stat card" testId="stat-online">
          <span className="stat-value">{machines.data ? online.length : '…'}</span>
          <span className="stat-label">machines online</span>
        </Link>
        <Link to="/machines" className="stat card" testId="stat-offline">
          <span className="stat-value">{machines.data ? list.length - online.length : '…'}</span>
          <span className="stat-label">offline</span>
        </Link>
        <Link to="/approvals" className={waiting.length ? 'stat card attention' : 'stat card'} testId="stat-waiting">
          <span className="stat-value">{approvals.data ? waiting.length : '…'}</span>
          <span className="stat-label">approvals waiting for you</span>
        </Link>
        <Link to="/connections" className="stat card" testId="stat-connections">
          <span className="stat-value">{connections.data ? connections.data.connections.length : '…'}</span>
          <span className="stat-label">AI connections</span>
        </Link>
      </div>

      <div className="columns">
        <section className="card">
          <h2>Waiting for you</h2>
          <ErrorNote error={errorText(approvals.error)} />
          {approvals.data && waiting.length === 0 && <p className="empty">Nothing waits for your decision.</p>}
          <ul className="list">
            {waiting.slice(0, 5).map((a) => (
              <WaitingRow key={a.id} approval={a} />
            ))}
          </ul>
          {waiting.length > 5 && <Link to="/approvals">All {waiting.length} waiting</Link>}
        </section>

        <section className="card">
          <h2>Machines</h2>
          <ErrorNote error={errorText(machines.error)} />
          {machines.data && list.length === 0 && (
            <p className="empty">
              No machines yet. {can(session.user, 'machines.enroll') && <Link to="/enroll">Enroll one</Link>}
            </p>
          )}
          <ul className="list">
            {[...online, ...list.filter((m) => !m.online)].slice(0, 8).map((m) => (
              <MachineRow key={m.id} machine={m} />
            ))}
          </ul>
          {list.length > 8 && <Link to="/machines">All {list.length} machines</Link>}
        </section>
      </div>

      {can(session.user, 'audit.read') && <RecentActivity />}

      <section className="card">
        <h2>Connections</h2>
        <ErrorNote error={errorText(connections.error)} />
        {connections.data?.connections.length === 0 && <p className="empty">No AI client is connected.</p>}
        <ul className="list">
          {connections.data?.connections.slice(0, 5).map((c) => (
            <li key={c.id} data-testid="overview-connection">
              <span>
                <strong>{c.client_name ? <VisibleText text={c.client_name} /> : 'Unnamed client'}</strong>{' '}
                <span className="hint">(as declared)</span>
                {c.user_name && <> · {c.user_name}</>} · last used <When at={c.last_used_at} never="never" />
              </span>
            </li>
          ))}
        </ul>
        <Link to="/connections">Manage connections</Link>
      </section>
    </Page>
  );
}

function WaitingRow({ approval: a }: { approval: ApprovalView }) {
  const subject = approvalSubject(a.args);
  return (
    <li data-testid="overview-approval">
      <span>
        <Link to={`/approvals/${a.id}`}>
          <b>{a.tool}</b> on <VisibleText text={a.machine.name} />
        </Link>
        {subject !== null && (
          <code className="subject">
            <VisibleText text={subject} />
          </code>
        )}
        <span className="hint">
          {a.requester.name} · <When at={a.created_at} />
        </span>
      </span>
    </li>
  );
}

function MachineRow({ machine: m }: { machine: MachineView }) {
  return (
    <li data-testid="overview-machine">
      <span>
        <span className={m.online ? 'dot online' : 'dot'} aria-hidden="true" />{' '}
        <strong>
          <VisibleText text={m.name} />
        </strong>
        {m.hostname && (
          <span className="hint">
            {' '}
            · <VisibleText text={m.hostname} />
          </span>
        )}
      </span>
      <span className={m.online ? 'badge ok' : 'badge'}>{m.online ? 'online' : 'offline'}</span>
    </li>
  );
}
