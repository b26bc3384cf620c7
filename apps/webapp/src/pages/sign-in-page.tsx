import { type InputHTMLAttributes, useState } from 'react';
import { client } from '../api';
import { signInWithPasskey } from '../passkeys';
import { navigate } from '../router';
import { useSession } from '../session';
import { ErrorNote, Field, useAction } from '../ui';

function nextPath(): string {
  const next = new URLSearchParams(window.location.search).get('next') ?? '/';
  // Only paths on this site: never an absolute or protocol-relative URL.
  return next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

/** A required input under its label, holding one of the password form's values. */
function SignInField(
  props: { label: string; hint?: string; name: string; value: string; onChange: (value: string) => void } & Pick<
    InputHTMLAttributes<HTMLInputElement>,
    'type' | 'autoComplete' | 'inputMode'
  >,
) {
  const { label, hint, onChange, ...input } = props;
  return (
    <Field label={label} hint={hint}>
      <input {...input} onChange={(e) => onChange(e.target.value)} required />
    </Field>
  );
}

export default function SignInPage() {
  const { refresh } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const passkey = useAction();
  const form = useAction();
  const done = async () => {
    await refresh();
    const next = nextPath();
    // A fragment, or a page the gateway renders itself (the OAuth consent page), needs a full page load.
    if (next.includes('#') || next.startsWith('/authorize?')) window.location.assign(next);
    else navigate(next);
  };
  return (
    <section className="card narrow">
      <h1>Sign in to LetKite</h1>
      <button
        type="button"
        className="primary wide"
        disabled={passkey.busy}
        onClick={() =>
          passkey.run(async () => {
            await signInWithPasskey();
            await done();
          })
        }
      >
        Sign in with a passkey
      </button>
      <ErrorNote error={passkey.error} />
      <div className="divider">
        <span>or</span>
      </div>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void form.run(async () => {
            await client.session.signInWithPassword({ email, password, code });
            await done();
          });
        }}
      >
        <SignInField
          label="E-mail"
          name="email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={setEmail}
        />
        <SignInField
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={setPassword}
        />
        <SignInField
          label="Authenticator code"
          hint="Or one of your recovery codes."
          name="code"
          autoComplete="one-time-code"
          inputMode="text"
          value={code}
          onChange={setCode}
        />
        <ErrorNote error={form.error} />
        <button type="submit" disabled={form.busy}>
          Sign in with password
        </button>
      </form>
    </section>
  );
}
