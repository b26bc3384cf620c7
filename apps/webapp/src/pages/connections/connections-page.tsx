import { api } from '../../api';
import { ErrorNote, Page, useAction, useLoad, When } from '../../ui';

/** One AI client connection, as `GET /api/connections` returns it. */
interface ConnectionView {
  id: string;
  user_name: string | null;
  client_id: string;
  client_name: string | null;
  redirect_host: string;
  scope: string;
  machines: '*' | string[];
  policy: string | Record<string, unknown>;
  created_at: string;
  last_used_at: string | null;
}

function policyName(policy: ConnectionView['policy']): string {
  return typeof policy === 'string' ? policy : String(policy.name ?? 'custom');
}

/**
 * The AI clients connected through OAuth, with what each was granted. Client names are what the client declared
 * about itself and are rendered as text only. Revoking cuts the client's live sessions at once.
 */
export default function ConnectionsPage() {
  const list = useLoad(() => api<{ connections: ConnectionView[] }>('GET', '/api/connections'));
  const revoke = useAction();
  const connections = list.data?.connections ?? [];
  return (
    <Page title="Connections" intro="AI clients you (or your team) connected, and what each may do.">
      <ErrorNote error={list.error ?? revoke.error} />
      {list.data && connections.length === 0 && <p>No AI client is connected.</p>}
      <ul className="cards">
        {connections.map((c) => (
          <li key={c.id} className="card" data-testid="connection">
            <h2>
              {c.client_name ?? 'Unnamed client'} <small className="hint">(as declared by the client)</small>
            </h2>
            <dl>
              <dt>Returns to</dt>
              <dd>
                <code>{c.redirect_host}</code>
              </dd>
              {c.user_name && (
                <>
                  <dt>Connected by</dt>
                  <dd>{c.user_name}</dd>
                </>
              )}
              <dt>May</dt>
              <dd>{c.scope === '' ? 'list machines only' : c.scope.split(' ').join(', ')}</dd>
              <dt>Machines</dt>
              <dd>{c.machines === '*' ? 'every machine the person reaches' : `${c.machines.length} chosen`}</dd>
              <dt>Policy</dt>
              <dd>{policyName(c.policy)}</dd>
              <dt>Connected</dt>
              <dd>
                <When at={c.created_at} />
              </dd>
              <dt>Last used</dt>
              <dd>
                <When at={c.last_used_at} never="never" />
              </dd>
            </dl>
            <button
              type="button"
              className="danger"
              disabled={revoke.busy}
              onClick={() =>
                revoke.run(async () => {
                  if (!window.confirm(`Revoke ${c.client_name ?? 'this client'}? It is cut off at once.`)) return;
                  await api('DELETE', `/api/connections/${encodeURIComponent(c.id)}`);
                  list.reload();
                })
              }
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </Page>
  );
}
