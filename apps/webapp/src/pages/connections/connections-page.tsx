import { type ConnectionView, connectionEndpoints, type GrantPolicy } from '@letkite/protocol/api';
import { useApiMutation, useApiQuery } from '../../queries';
import { ErrorNote, errorText, Page, When } from '../../ui';
import { VisibleText } from '../../visible-value';

function policyName(policy: GrantPolicy): string {
  return typeof policy === 'string' ? policy : String(policy.name ?? 'custom');
}

/**
 * The AI clients connected through OAuth, with what each was granted. Client names are what the client declared
 * about itself: rendered as text with invisible and direction-changing characters made visible. Revoking cuts the
 * client's live sessions at once.
 */
export default function ConnectionsPage() {
  const list = useApiQuery(connectionEndpoints.list);
  const revoke = useApiMutation(connectionEndpoints.revoke, { invalidates: [connectionEndpoints.list] });
  const connections = list.data?.connections ?? [];
  return (
    <Page title="Connections" intro="AI clients you (or your team) connected, and what each may do.">
      <ErrorNote error={errorText(list.error ?? revoke.error)} />
      {list.data && connections.length === 0 && <p className="empty">No AI client is connected.</p>}
      <div className="grid">
        {connections.map((c) => (
          <ConnectionCard
            key={c.id}
            connection={c}
            busy={revoke.isPending}
            onRevoke={() => {
              if (window.confirm(`Revoke ${c.client_name ?? 'this client'}? It is cut off at once.`)) {
                revoke.mutate({ id: c.id });
              }
            }}
          />
        ))}
      </div>
    </Page>
  );
}

function ConnectionCard(props: { connection: ConnectionView; busy: boolean; onRevoke: () => void }) {
  const c = props.connection;
  return (
    <article className="card item" data-testid="connection">
      <header>
        <h2>
          {c.client_name ? <VisibleText text={c.client_name} /> : 'Unnamed client'}{' '}
          <small className="hint">(as declared by the client)</small>
        </h2>
      </header>
      <dl className="kv">
        <dt>Returns to</dt>
        <dd>
          <code>
            <VisibleText text={c.redirect_host} />
          </code>
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
      <div className="actions">
        <button type="button" className="danger" disabled={props.busy} onClick={props.onRevoke}>
          Revoke
        </button>
      </div>
    </article>
  );
}
