import { type RecoveryCodesResponse, securityEndpoints, type TotpSetupResponse } from '@letkite/protocol/api';
import { useState } from 'react';
import { client } from '../api';
import { approverTomlEntry, registerPasskey } from '../passkeys';
import { useApiQuery } from '../queries';
import { navigate } from '../router';
import { useSession } from '../session';
import { ErrorNote, errorText, Field, Page, Secret, useAction, When } from '../ui';

export default function SecurityPage() {
  return (
    <Page title="Security" intro="How you sign in, and where you are signed in.">
      <Passkeys />
      <PasswordTotp />
      <Sessions />
    </Page>
  );
}

function Passkeys() {
  const list = useApiQuery(securityEndpoints.passkeys);
  const { refresh, session } = useSession();
  const [name, setName] = useState('');
  const action = useAction();
  return (
    <section className="card">
      <h2>Passkeys</h2>
      <ul className="list">
        {list.data?.passkeys.map((p) => (
          <li key={p.id}>
            <span>
              <strong>{p.name}</strong> · added <When at={p.created_at} /> · last used{' '}
              <When at={p.last_used_at} never="never" />
            </span>
            <button
              type="button"
              className="danger small"
              onClick={() =>
                action.run(async () => {
                  await client.security.removePasskey({ id: p.id });
                  await list.refetch();
                  await refresh();
                })
              }
            >
              Remove
            </button>
            <details className="approver-pin">
              <summary>Pin on a machine</summary>
              <p className="hint">
                A machine that pins this passkey in its <code>/etc/letkite/ceiling.toml</code> checks approvals itself:
                it runs an approved call only when this passkey signed exactly that call, whatever the gateway says.
                Paste this into the ceiling's <code>approvers = [ … ]</code> list:
              </p>
              <Secret
                label="approvers entry"
                value={approverTomlEntry(`${session.user?.name ?? 'me'} (${p.name})`, p)}
                testId={`approver-toml-${p.id}`}
              />
            </details>
          </li>
        ))}
      </ul>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await registerPasskey(securityEndpoints.passkeyOptions, securityEndpoints.addPasskey, {
              name: name || 'Passkey',
            });
            setName('');
            await list.refetch();
            await refresh();
          });
        }}
      >
        <Field label="Name for a new passkey">
          <input name="passkey-name" value={name} placeholder="e.g. Phone" onChange={(e) => setName(e.target.value)} />
        </Field>
        <button type="submit" disabled={action.busy}>
          Add a passkey
        </button>
      </form>
      <ErrorNote error={action.error ?? errorText(list.error)} />
    </section>
  );
}

function PasswordTotp() {
  const { session, refresh } = useSession();
  const [setup, setSetup] = useState<TotpSetupResponse | null>(null);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<RecoveryCodesResponse['recovery_codes'] | null>(null);
  const action = useAction();
  const has = session.credentials?.password ?? false;
  return (
    <section className="card">
      <h2>Password and authenticator</h2>
      <p>
        {has
          ? `Set up. ${session.credentials?.recovery_codes_left ?? 0} recovery codes left.`
          : 'Not set up: you sign in with passkeys only.'}
      </p>
      {codes && (
        <ul className="codes" data-testid="recovery-codes">
          {codes.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ul>
      )}
      {setup ? (
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              const r = await client.security.setPassword({ challenge_id: setup.challenge_id, password, code });
              setCodes(r.recovery_codes);
              setSetup(null);
              await refresh();
            });
          }}
        >
          <Field label="New password" hint="At least 12 characters.">
            <input
              type="password"
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
            />
          </Field>
          <p className="hint">
            Add this key to your authenticator app (or <a href={setup.uri}>open it on this phone</a>):
          </p>
          <Secret label="Authenticator key" value={setup.secret} testId="totp-secret" />
          <Field label="Code from the app">
            <input
              inputMode="numeric"
              autoComplete="one-time-code"
              value={code}
              onChange={(e) => setCode(e.target.value)}
              required
            />
          </Field>
          <button type="submit" className="primary" disabled={action.busy}>
            Save password and authenticator
          </button>
        </form>
      ) : (
        <div className="actions">
          <button type="button" onClick={() => action.run(async () => setSetup(await client.security.beginPassword()))}>
            {has ? 'Replace password and authenticator' : 'Set up password and authenticator'}
          </button>
          {has && (
            <button
              type="button"
              className="danger"
              onClick={() =>
                action.run(async () => {
                  await client.security.removePassword();
                  await refresh();
                })
              }
            >
              Remove password
            </button>
          )}
        </div>
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}

function Sessions() {
  const list = useApiQuery(securityEndpoints.sessions);
  const { refresh } = useSession();
  const action = useAction();
  return (
    <section className="card">
      <h2>Signed-in sessions</h2>
      <p className="hint">
        Revoking a session also disconnects your AI clients' open MCP sessions; they reconnect with their own
        credentials.
      </p>
      <ul className="list">
        {list.data?.sessions.map((s) => (
          <li key={s.id} data-testid="session-row">
            <span>
              {s.current && <strong>This browser · </strong>}
              {s.method.replace('_', ' + ')} · since <When at={s.created_at} /> ·{' '}
              {s.user_agent?.slice(0, 60) ?? 'unknown browser'}
            </span>
            <button
              type="button"
              className="danger small"
              onClick={() =>
                action.run(async () => {
                  await client.security.revokeSession({ id: s.id });
                  if (s.current) {
                    await refresh();
                    navigate('/sign-in');
                  } else await list.refetch();
                })
              }
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <ErrorNote error={action.error ?? errorText(list.error)} />
    </section>
  );
}
