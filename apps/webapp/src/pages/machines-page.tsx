import { type MachineView, machineEndpoints, machineListEndpoints } from '@letkite/protocol/api';
import { useState } from 'react';
import { can } from '../api';
import { ceilingRows } from '../ceiling-rows';
import { useApiMutation, useApiQuery } from '../queries';
import { Link } from '../router';
import { useSession } from '../session';
import { ErrorNote, errorText, Page, When } from '../ui';
import { VisibleText } from '../visible-value';

/**
 * Everything here but the id, the online state and the groups comes from agents and is untrusted: React renders it
 * as text, never as HTML, and every invisible or direction-changing character is shown as a visible symbol.
 */
export default function MachinesPage() {
  const { session } = useSession();
  const machines = useApiQuery(machineListEndpoints.list);
  const mayRename = can(session.user, 'machines.manage');
  return (
    <Page title="Machines" intro="Machines you can reach, with the ceiling each one reports.">
      <ErrorNote error={errorText(machines.error)} />
      {machines.data?.machines.length === 0 && (
        <p className="empty">
          No machines yet. {can(session.user, 'machines.enroll') && <Link to="/enroll">Enroll one</Link>}
        </p>
      )}
      <div className="grid">
        {machines.data?.machines.map((m) => (
          <article key={m.id} className="card machine" data-testid="machine" data-machine-id={m.id}>
            <MachineName machine={m} mayRename={mayRename} />
            <dl>
              <dt>Host</dt>
              <dd data-testid="machine-hostname">{m.hostname === null ? '—' : <VisibleText text={m.hostname} />}</dd>
              <dt>OS</dt>
              <dd data-testid="machine-os">
                <VisibleText text={[m.os, m.os_release, m.arch].filter(Boolean).join(' · ') || '—'} />
              </dd>
              <dt>Agent</dt>
              <dd>{m.agent_version === null ? '—' : <VisibleText text={m.agent_version} />}</dd>
              <dt>Last seen</dt>
              <dd>
                <When at={m.last_seen_at} never="never" />
              </dd>
              <dt>Claimed by</dt>
              <dd>{m.claimed_by.length ? m.claimed_by.map((g) => g.name).join(', ') : 'everyone in the account'}</dd>
              {m.labels.length > 0 && (
                <>
                  <dt>Labels</dt>
                  <dd>
                    <VisibleText text={m.labels.join(', ')} />
                  </dd>
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

/** The machine's name, and for people with machines.manage a rename form in place. */
function MachineName({ machine: m, mayRename }: { machine: MachineView; mayRename: boolean }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(m.name);
  const rename = useApiMutation(machineEndpoints.rename, { invalidates: [machineListEndpoints.list] });
  if (editing) {
    return (
      <form
        className="rename"
        onSubmit={(e) => {
          e.preventDefault();
          rename.mutate({ id: m.id, name: name.trim() }, { onSuccess: () => setEditing(false) });
        }}
      >
        <input
          aria-label={`New name for ${m.name}`}
          name="machine-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
        />
        <div className="actions">
          <button type="submit" className="primary small" disabled={rename.isPending}>
            Save
          </button>
          <button type="button" className="small" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </div>
        <ErrorNote error={errorText(rename.error)} />
      </form>
    );
  }
  return (
    <header>
      <span className={m.online ? 'dot online' : 'dot'} aria-hidden="true" />
      <h2 data-testid="machine-name">
        <VisibleText text={m.name} />
      </h2>
      <span className={m.online ? 'badge ok' : 'badge'}>{m.online ? 'online' : 'offline'}</span>
      {mayRename && (
        <button
          type="button"
          className="small"
          aria-label={`Rename ${m.name}`}
          onClick={() => {
            setName(m.name);
            rename.reset();
            setEditing(true);
          }}
        >
          Rename
        </button>
      )}
    </header>
  );
}

const sourceWords: Record<string, string> = {
  file: 'from /etc/letkite/ceiling.toml',
  defaults: 'the defaults: no ceiling.toml on the machine',
  error: 'failing closed',
};

/** The effective ceiling as rows in words; the lists behind a row (paths, rules) open below it. */
function Ceiling({ machine }: { machine: MachineView }) {
  if (machine.ceiling_error) {
    return (
      <p className="error" data-testid="ceiling-error">
        Ceiling invalid — the machine refuses everything: <VisibleText text={machine.ceiling_error} />
      </p>
    );
  }
  const c = machine.ceiling;
  if (!c) return <p className="hint">No ceiling reported yet.</p>;
  const rows = ceilingRows(c);
  const source = machine.ceiling_source;
  return (
    <details className="ceiling">
      <summary>
        Effective ceiling: shell <strong>{String(c.shell ?? '?')}</strong>, screen{' '}
        <strong>{String(c.gui ?? '?')}</strong>
      </summary>
      {source && <p className="hint">{sourceWords[source] ?? source}</p>}
      <dl className="ceiling-rows" data-testid="ceiling-rows">
        {rows.map((r) => (
          <div key={r.key} className="ceiling-row">
            <dt>{r.label}</dt>
            <dd>
              <VisibleText text={r.value} />
              {r.items.length > 0 && (
                <ul>
                  {r.items.map((item, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: a ceiling list's entries may repeat
                    <li key={i}>
                      <code>
                        <VisibleText text={item} />
                      </code>
                    </li>
                  ))}
                </ul>
              )}
            </dd>
          </div>
        ))}
      </dl>
    </details>
  );
}
