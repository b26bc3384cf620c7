import { useState } from 'react';
import { api, can } from '../api';
import { useSession } from '../session';
import { ErrorNote, Field, Page, Secret, useAction, useLoad, When } from '../ui';

interface TokenRow {
  id: string;
  name: string;
  user_id: string;
  grant: { policy: unknown; machines: '*' | string[]; scopes: '*' | string[] };
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export default function TokensPage() {
  const { session } = useSession();
  const tokens = useLoad(() => api<{ tokens: TokenRow[] }>('GET', '/api/tokens'));
  const [name, setName] = useState('');
  const [policy, setPolicy] = useState('read-only');
  const [expires, setExpires] = useState('30d');
  const [created, setCreated] = useState<string | null>(null);
  const action = useAction();
  return (
    <Page title="API tokens" intro="A token lets an MCP client act as you, bounded by the policy chosen here.">
      {can(session.user, 'clients.connect') ? (
        <form
          className="card inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              const r = await api<{ token: string }>('POST', '/api/tokens', {
                name,
                policy,
                ...(expires ? { expires } : {}),
              });
              setCreated(r.token);
              setName('');
              tokens.reload();
            });
          }}
        >
          <h2>New token</h2>
          <Field label="Name">
            <input name="token-name" value={name} onChange={(e) => setName(e.target.value)} required />
          </Field>
          <Field label="Policy">
            <select name="token-policy" value={policy} onChange={(e) => setPolicy(e.target.value)}>
              <option value="read-only">read-only</option>
              <option value="full">full</option>
            </select>
          </Field>
          <Field label="Expires after">
            <select name="token-expires" value={expires} onChange={(e) => setExpires(e.target.value)}>
              <option value="1d">1 day</option>
              <option value="30d">30 days</option>
              <option value="365d">1 year</option>
              <option value="">never</option>
            </select>
          </Field>
          <button type="submit" className="primary" disabled={action.busy}>
            Create token
          </button>
        </form>
      ) : (
        <p className="empty">Creating tokens needs the clients.connect permission.</p>
      )}
      <ErrorNote error={action.error ?? tokens.error} />
      {created && <Secret label="Your new token (shown once)" value={created} testId="new-token" />}
      <ul className="list">
        {tokens.data?.tokens.map((t) => (
          <li key={t.id} className={t.revoked_at ? 'revoked' : ''}>
            <span>
              <strong>{t.name}</strong> · {typeof t.grant.policy === 'string' ? t.grant.policy : 'custom policy'} ·
              machines {t.grant.machines === '*' ? 'all' : t.grant.machines.length} · last used{' '}
              <When at={t.last_used_at} never="never" />
              {t.revoked_at ? (
                ' · revoked'
              ) : t.expires_at ? (
                <>
                  {' '}
                  · expires <When at={t.expires_at} />
                </>
              ) : (
                ''
              )}
            </span>
            {!t.revoked_at && (
              <button
                type="button"
                className="danger small"
                onClick={() =>
                  action.run(async () => {
                    await api('DELETE', `/api/tokens/${t.id}`);
                    tokens.reload();
                  })
                }
              >
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
    </Page>
  );
}
