import { onboardingEndpoints } from '@letkite/protocol/api';
import { useEffect, useState } from 'react';
import { client } from '../api';
import { registerPasskey } from '../passkeys';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { ErrorNote, Field, Secret, useAction, useLoad } from '../ui';

/**
 * First-run owner setup (`/setup#token`) and accepting an invitation (`/invite#token`). The token travels in the
 * URL fragment, which browsers never send to a server or put in a Referer.
 */
export default function OnboardingPage() {
  const [token] = useState(() => window.location.hash.slice(1));
  const { session, refresh } = useSession();
  // POSTs with effects (the TOTP secret below is a fresh challenge), so these are loads, not cached queries.
  const ticket = useLoad(() => client.onboarding.inspect({ token }));
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [method, setMethod] = useState<'passkey' | 'password'>('passkey');
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const action = useAction();
  useEffect(() => {
    if (ticket.data?.email) setEmail(ticket.data.email);
  }, [ticket.data]);

  if (ticket.error) {
    return (
      <section className="card narrow">
        <h1>This link does not work</h1>
        <p className="error" role="alert">
          {ticket.error}
        </p>
        <p>
          <Link to="/sign-in">Sign in</Link> instead, or ask for a new link.
        </p>
      </section>
    );
  }
  if (!ticket.data) return <div className="loading">Checking the link…</div>;
  const t = ticket.data;

  if (recovery) {
    return (
      <section className="card narrow">
        <h1>Keep your recovery codes</h1>
        <p>Each code signs you in once if you lose your authenticator. They are shown only now.</p>
        <ul className="codes" data-testid="recovery-codes">
          {recovery.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ul>
        <button type="button" className="primary" onClick={() => navigate('/')}>
          I saved them — continue
        </button>
      </section>
    );
  }

  if (t.existing_user) {
    return (
      <section className="card narrow">
        <h1>Join {t.account_name}</h1>
        <p>
          You were invited as <strong>{t.role}</strong>. You already have a LetKite sign-in for {t.email}.
        </p>
        {session.user ? (
          <>
            <ErrorNote error={action.error} />
            <button
              type="button"
              className="primary"
              disabled={action.busy}
              onClick={() =>
                action.run(async () => {
                  await client.onboarding.acceptInvitation({ token });
                  await refresh();
                  navigate('/');
                })
              }
            >
              Accept the invitation
            </button>
          </>
        ) : (
          <p>
            <Link to={`/sign-in?next=${encodeURIComponent(`/invite#${token}`)}`}>Sign in</Link> first, then open the
            link again.
          </p>
        )}
      </section>
    );
  }

  const title = t.kind === 'setup' ? 'Set up LetKite' : `Join ${t.account_name}`;
  return (
    <section className="card narrow">
      <h1>{title}</h1>
      <p className="intro">
        {t.kind === 'setup'
          ? 'You are the owner of this LetKite. Choose how you will sign in.'
          : `You were invited as ${t.role}. Choose how you will sign in.`}
      </p>
      <Field label="Your name">
        <input name="name" value={name} onChange={(e) => setName(e.target.value)} autoComplete="name" required />
      </Field>
      <Field label="E-mail">
        <input
          name="email"
          type="email"
          value={email}
          readOnly={t.email !== null}
          onChange={(e) => setEmail(e.target.value)}
          autoComplete="email"
          required
        />
      </Field>
      <div className="tabs" role="tablist">
        <button
          type="button"
          role="tab"
          aria-selected={method === 'passkey'}
          className={method === 'passkey' ? 'tab active' : 'tab'}
          onClick={() => setMethod('passkey')}
        >
          Passkey
        </button>
        <button
          type="button"
          role="tab"
          aria-selected={method === 'password'}
          className={method === 'password' ? 'tab active' : 'tab'}
          onClick={() => setMethod('password')}
        >
          Password + authenticator
        </button>
      </div>
      <ErrorNote error={action.error} />
      {method === 'passkey' ? (
        <div className="stack">
          <p className="hint">Your device will ask for your fingerprint, face or PIN.</p>
          <button
            type="button"
            className="primary"
            disabled={action.busy || !name || !email}
            onClick={() =>
              action.run(async () => {
                await registerPasskey(onboardingEndpoints.passkeyOptions, onboardingEndpoints.completeWithPasskey, {
                  token,
                  name,
                  email,
                });
                await refresh();
                navigate('/');
              })
            }
          >
            Create a passkey
          </button>
        </div>
      ) : (
        <PasswordSetup
          token={token}
          name={name}
          email={email}
          onDone={async (codes) => {
            await refresh();
            setRecovery(codes);
          }}
        />
      )}
    </section>
  );
}

function PasswordSetup(props: {
  token: string;
  name: string;
  email: string;
  onDone: (codes: string[]) => Promise<void>;
}) {
  const totp = useLoad(() => client.onboarding.totp({ token: props.token }));
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const action = useAction();
  if (totp.error) return <ErrorNote error={totp.error} />;
  if (!totp.data) return <div className="loading">…</div>;
  const { challenge_id, secret, uri } = totp.data;
  return (
    <form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          const r = await client.onboarding.completeWithPassword({
            token: props.token,
            challenge_id,
            name: props.name,
            email: props.email,
            password,
            code,
          });
          await props.onDone(r.recovery_codes);
        });
      }}
    >
      <Field label="Password" hint="At least 12 characters.">
        <input
          name="password"
          type="password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="new-password"
          minLength={12}
          required
        />
      </Field>
      <p className="hint">
        Add this key to your authenticator app (or <a href={uri}>open it on this phone</a>):
      </p>
      <Secret label="Authenticator key" value={secret} testId="totp-secret" />
      <Field label="Code from the app">
        <input
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="[0-9 ]{6,7}"
          value={code}
          onChange={(e) => setCode(e.target.value)}
          required
        />
      </Field>
      <ErrorNote error={action.error} />
      <button type="submit" className="primary" disabled={action.busy || !props.name || !props.email}>
        Finish
      </button>
    </form>
  );
}
