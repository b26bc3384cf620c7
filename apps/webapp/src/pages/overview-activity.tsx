import { type AuditEventView, auditEndpoints } from '@letkite/protocol/api';
import { useApiQuery } from '../queries';
import { Link } from '../router';
import { ErrorNote, errorText, When } from '../ui';
import { VisibleText } from '../visible-value';

/** Who or what did it, in words: a person's name where the row has one, else the actor kind. */
function actorOf(e: AuditEventView): string {
  if (e.user_name) return e.user_name;
  const kind = e.actor.split(':')[0] ?? e.actor;
  return { agent: 'an agent', system: 'LetKite', cli: 'the CLI' }[kind] ?? e.actor;
}

/** What happened, in one line: a tool call on a machine, or an admin action on its target. */
function whatOf(e: AuditEventView) {
  if (e.tool) {
    return (
      <>
        <code>{e.tool}</code>
        {e.machine_name && (
          <>
            {' '}
            on <VisibleText text={e.machine_name} />
          </>
        )}
      </>
    );
  }
  return <code>{e.action}</code>;
}

/** The last ten rows of the activity log (needs audit.read), newest first, with a link to the full log. */
export function RecentActivity() {
  const recent = useApiQuery(auditEndpoints.list, { limit: 10 }, { refetchInterval: 30_000 });
  return (
    <section className="card">
      <h2>Recent activity</h2>
      <ErrorNote error={errorText(recent.error)} />
      {recent.data?.events.length === 0 && <p className="empty">Nothing happened yet.</p>}
      <ul className="list activity">
        {recent.data?.events.map((e) => (
          <li key={e.id} data-testid="overview-activity" data-outcome={e.outcome ?? ''}>
            <span>
              {whatOf(e)} · {actorOf(e)}
              {e.client_name && (
                <>
                  {' '}
                  via <VisibleText text={e.client_name} />
                </>
              )}
            </span>
            <span className="hint">
              {e.outcome && e.outcome !== 'ok' && <span className="badge">{e.outcome}</span>} <When at={e.at} />
            </span>
          </li>
        ))}
      </ul>
      <Link to="/activity">The whole activity log</Link>
    </section>
  );
}
