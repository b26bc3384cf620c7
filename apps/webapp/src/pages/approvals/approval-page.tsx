import { approvalEndpoints } from '@letkite/protocol/api';
import { startAuthentication } from '@simplewebauthn/browser';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { client } from '../../api';
import { queryKeyOf, useApiQuery } from '../../queries';
import { Link } from '../../router';
import { ErrorNote, errorText, Field, useAction, When } from '../../ui';
import { VisibleText, VisibleValue } from '../../visible-value';
import { type ApprovalView, statusLabel, timeLeft } from './approval-types';
import './approvals.css';

type AuthOptions = Parameters<typeof startAuthentication>[0]['optionsJSON'];

function Reason(props: { reason: ApprovalView['reason'] }) {
  const { reason } = props;
  if (reason.kind === 'policy_tool') {
    return (
      <>
        Policy <b>{reason.policy}</b> lists <code>{reason.tool}</code> under <code>approval.tools</code>.
      </>
    );
  }
  return (
    <ul className="plain">
      {reason.rules.map((r, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: reasons are positional
        <li key={i}>
          <VisibleText text={r.message} /> <span className="hint">({r.layer})</span>
        </li>
      ))}
    </ul>
  );
}

/**
 * The approval page (phone first): exactly what will run where, who asked, why, and how long is left. Approving
 * takes a fresh passkey assertion bound to this approval, or an authenticator code — passkey only where the
 * machine checks approvals itself (the signature is over exactly what will run); denying takes a tap.
 */
export default function ApprovalPage(props: { params: Record<string, string> }) {
  const id = props.params.id ?? '';
  const loaded = useApiQuery(approvalEndpoints.get, { id });
  const queryClient = useQueryClient();
  const [now, setNow] = useState(Date.now());
  const [code, setCode] = useState('');
  const action = useAction();
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);

  const a = loaded.data?.approval;
  if (loaded.error) return <ErrorNote error={errorText(loaded.error)} />;
  if (!a) return <p aria-busy="true">Loading…</p>;
  const left = timeLeft(a.expires_at, now);
  const decidable = a.can_decide && a.status === 'pending' && left !== null;
  // A decision answers the request as it now is: show it, and let the lists and the badge count again.
  const decided = async (next: { approval: ApprovalView }) => {
    queryClient.setQueryData(queryKeyOf(approvalEndpoints.get, { id }), next);
    await queryClient.invalidateQueries({ queryKey: queryKeyOf(approvalEndpoints.list) });
  };
  const approveWithPasskey = () =>
    action.run(async () => {
      const { challenge, options } = await client.approvals.passkeyOptions({ id: a.id });
      const response = await startAuthentication({ optionsJSON: options as unknown as AuthOptions });
      await decided(
        await client.approvals.approve({ id: a.id, method: 'passkey', challenge, response: { ...response } }),
      );
    });
  const approveWithCode = () =>
    action.run(async () => {
      await decided(await client.approvals.approve({ id: a.id, method: 'totp', code }));
      setCode('');
    });
  const deny = () => action.run(async () => decided(await client.approvals.deny({ id: a.id })));

  return (
    <article className="approval" data-status={a.status}>
      <p className="approval-status" data-testid="approval-status">
        {statusLabel[a.status]}
        {a.status === 'pending' && left && <span className="time-left"> · {left} left</span>}
      </p>
      <h1>
        Run <code>{a.tool}</code> on{' '}
        <b>
          <VisibleText text={a.machine.name} />
        </b>
        ?
      </h1>

      <section className="card">
        <h2>Exactly this</h2>
        <p className="hint">
          Invisible and control characters are shown as highlighted symbols such as ␊ or &lt;U+202E&gt;.
        </p>
        <dl className="args" data-testid="approval-args">
          {Object.entries(a.args).map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>
                <VisibleValue value={value} />
              </dd>
            </div>
          ))}
        </dl>
      </section>

      <section className="card">
        <dl className="facts">
          <dt>Machine</dt>
          <dd>
            <VisibleText text={a.machine.name} /> <span className="hint">{a.machine.id}</span>
          </dd>
          <dt>Requested by</dt>
          <dd>{a.requester.name}’s AI connection</dd>
          <dt>Client</dt>
          <dd>
            {a.client_name_declared ? <VisibleText text={a.client_name_declared} /> : 'unnamed'}{' '}
            <span className="hint">(as declared by the client)</span>
          </dd>
          <dt>Why approval</dt>
          <dd>
            <Reason reason={a.reason} />
          </dd>
          <dt>Who may decide</dt>
          <dd>{a.asked.join(', ')}</dd>
          <dt>Asked</dt>
          <dd>
            <When at={a.created_at} />
          </dd>
          <dt>Expires</dt>
          <dd>
            <When at={a.expires_at} />
          </dd>
          {a.decided_at && (
            <>
              <dt>Decided</dt>
              <dd>
                {a.decided_by} with {a.decided_with}, <When at={a.decided_at} />
              </dd>
            </>
          )}
        </dl>
      </section>

      {decidable ? (
        <section className="card decide">
          <button
            type="button"
            className="primary big"
            disabled={action.busy}
            onClick={() => void approveWithPasskey()}
          >
            Approve with passkey
          </button>
          {a.passkey_only ? (
            <p className="hint passkey-only" data-testid="passkey-only">
              Passkey only. {a.passkey_only_reason}
            </p>
          ) : (
            <form
              className="totp-form"
              onSubmit={(e) => {
                e.preventDefault();
                void approveWithCode();
              }}
            >
              <Field label="or an authenticator code">
                <input
                  name="code"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  pattern="[0-9 ]{6,8}"
                  value={code}
                  onChange={(e) => setCode(e.target.value)}
                />
              </Field>
              <button type="submit" disabled={action.busy || code.trim().length < 6}>
                Approve with code
              </button>
            </form>
          )}
          <button type="button" className="danger big" disabled={action.busy} onClick={() => void deny()}>
            Deny
          </button>
          <ErrorNote error={action.error} />
        </section>
      ) : (
        a.status === 'pending' && a.why_not && <p className="hint">You cannot decide this request: {a.why_not}.</p>
      )}
      <p>
        <Link to="/approvals">All approvals</Link>
      </p>
    </article>
  );
}
