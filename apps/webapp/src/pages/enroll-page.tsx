import { useState } from 'react';
import { api, can } from '../api';
import { useSession } from '../session';
import { ErrorNote, Page, Secret, useAction, When } from '../ui';

export default function EnrollPage() {
  const { session } = useSession();
  const [join, setJoin] = useState<{ token: string; command: string; expires_at: string } | null>(null);
  const action = useAction();
  if (!can(session.user, 'machines.enroll')) {
    return (
      <Page title="Enroll a machine">
        <p className="empty">Enrolling machines needs the machines.enroll permission.</p>
      </Page>
    );
  }
  return (
    <Page
      title="Enroll a machine"
      intro="One command installs and joins a machine: run it there. The join token in it works once."
    >
      <button
        type="button"
        className="primary"
        disabled={action.busy}
        onClick={() => action.run(async () => setJoin(await api('POST', '/api/machines/enroll', {})))}
      >
        {join ? 'New join token' : 'Create a join token'}
      </button>
      <ErrorNote error={action.error} />
      {join && (
        <div className="card">
          <Secret label="Run on the machine" value={join.command} testId="enroll-command" />
          <p className="hint">
            Expires <When at={join.expires_at} />. The machine needs Node.js 20.19 or newer, curl and systemd. The
            script downloads the agent from this gateway, checks its SHA-256, installs it to <code>/opt/letkite</code>,
            writes the <code>letkite-agent</code> service and a commented <code>/etc/letkite/ceiling.toml</code>, joins
            and starts the agent. Running it again changes nothing. The machine then edits its own ceiling to decide
            what any AI may do there.
          </p>
        </div>
      )}
    </Page>
  );
}
