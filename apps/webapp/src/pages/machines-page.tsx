import { api, can } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import { ErrorNote, Page, useLoad, When } from '../ui';

interface MachineRow {
  id: string;
  name: string;
  online: boolean;
  hostname: string | null;
  os: string | null;
  os_release: string | null;
  arch: string | null;
  agent_version: string | null;
  labels: string[];
  ceiling: Record<string, unknown> | null;
  ceiling_source: string | null;
  ceiling_error: string | null;
  last_seen_at: string | null;
  claimed_by: { id: string; name: string }[];
}

/** Everything here comes from agents and is untrusted: React renders it as text, never as HTML. */
export default function MachinesPage() {
  const { session } = useSession();
  const machines = useLoad(() => api<{ machines: MachineRow[] }>('GET', '/api/machines'));
  return (
    <Page title="Machines" intro="Machines you can reach, with the ceiling each one reports.">
      <ErrorNote error={machines.error} />
      {machines.data?.machines.length === 0 && (
        <p className="empty">
          No machines yet. {can(session.user, 'machines.enroll') && <Link to="/enroll">Enroll one</Link>}
        </p>
      )}
      <div className="grid">
        {machines.data?.machines.map((m) => (
          <article key={m.id} className="card machine" data-testid="machine">
            <header>
              <span className={m.online ? 'dot online' : 'dot'} aria-hidden="true" />
              <h2 data-testid="machine-name">{m.name}</h2>
              <span className={m.online ? 'badge ok' : 'badge'}>{m.online ? 'online' : 'offline'}</span>
            </header>
            <dl>
              <dt>Host</dt>
              <dd data-testid="machine-hostname">{m.hostname ?? '—'}</dd>
              <dt>OS</dt>
              <dd>{[m.os, m.os_release, m.arch].filter(Boolean).join(' · ') || '—'}</dd>
              <dt>Last seen</dt>
              <dd>
                <When at={m.last_seen_at} never="never" />
              </dd>
              <dt>Claimed by</dt>
              <dd>{m.claimed_by.length ? m.claimed_by.map((g) => g.name).join(', ') : 'everyone in the account'}</dd>
              {m.labels.length > 0 && (
                <>
                  <dt>Labels</dt>
                  <dd>{m.labels.join(', ')}</dd>
                </>
              )}
            </dl>
            <Ceiling machine={m} />
          </article>
        ))}
      </div>
    </Page>
  );
}

function Ceiling({ machine }: { machine: MachineRow }) {
  if (machine.ceiling_error) {
    return (
      <p className="error">
        Ceiling invalid — the machine refuses everything: <span>{machine.ceiling_error}</span>
      </p>
    );
  }
  const c = machine.ceiling;
  if (!c) return <p className="hint">No ceiling reported yet.</p>;
  const item = (label: string, value: unknown) => (
    <li key={label}>
      <span className="label">{label}</span> <span>{typeof value === 'string' ? value : JSON.stringify(value)}</span>
    </li>
  );
  return (
    <details className="ceiling">
      <summary>
        Effective ceiling: shell <strong>{String(c.shell ?? '?')}</strong>, screen{' '}
        <strong>{String(c.gui ?? '?')}</strong>
        {machine.ceiling_source ? ` (${machine.ceiling_source})` : ''}
      </summary>
      <ul>
        {item('commands', c.commands_mode)}
        {item('run as', c.run_as)}
        {item('files', c.files)}
        {item('deny', c.deny)}
        {item('terminals', c.terminals)}
        {item('transfers', c.transfers)}
        {item('tunnels', c.tunnel_targets)}
      </ul>
    </details>
  );
}
