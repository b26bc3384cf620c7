import { memberEndpoints, type Role, roleEndpoints } from '@letkite/protocol/api';
import { useState } from 'react';
import { can } from '../api';
import { useApiMutation, useApiQuery } from '../queries';
import { useSession } from '../session';
import { ErrorNote, errorText, Field, Page, Secret, When } from '../ui';

/** A role choice: a built-in role, or `member` with a custom role (`custom:<id>`). */
function roleValue(role: string, custom: { id: string } | null): string {
  return custom ? `custom:${custom.id}` : role;
}
function parseRole(value: string): { role: Role; custom_role_id: string | null } {
  if (value.startsWith('custom:')) return { role: 'member', custom_role_id: value.slice(7) };
  return { role: value === 'owner' || value === 'admin' ? value : 'member', custom_role_id: null };
}

export default function MembersPage() {
  const { session } = useSession();
  const allowed = can(session.user, 'members.manage');
  const data = useApiQuery(memberEndpoints.list, undefined, { enabled: allowed });
  const roles = useApiQuery(roleEndpoints.list, undefined, { enabled: allowed });
  const invalidates = [memberEndpoints.list];
  const invite = useApiMutation(memberEndpoints.invite, { invalidates });
  const changeRole = useApiMutation(memberEndpoints.changeRole, { invalidates });
  const remove = useApiMutation(memberEndpoints.remove, { invalidates });
  const withdraw = useApiMutation(memberEndpoints.withdrawInvitation, { invalidates });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  if (!allowed) {
    return (
      <Page title="Members">
        <p className="empty">Managing members needs the members.manage permission.</p>
      </Page>
    );
  }
  const roleOptions = (
    <>
      <option value="member">member</option>
      <option value="admin">admin</option>
      {session.user?.role === 'owner' && <option value="owner">owner</option>}
      {roles.data?.roles.map((r) => (
        <option key={r.id} value={`custom:${r.id}`}>
          {r.name} (custom)
        </option>
      ))}
    </>
  );
  const invited = invite.data;
  const changeError = changeRole.error ?? remove.error ?? withdraw.error;
  return (
    <Page title="Members" intro="People in this account and what they may do.">
      <form
        className="card inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          invite.mutate({ email, ...parseRole(role) }, { onSuccess: () => setEmail('') });
        }}
      >
        <h2>Invite someone</h2>
        <Field label="E-mail">
          <input name="invite-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
        </Field>
        <Field label="Role">
          <select name="invite-role" value={role} onChange={(e) => setRole(e.target.value)}>
            {roleOptions}
          </select>
        </Field>
        <button type="submit" className="primary" disabled={invite.isPending}>
          Send invitation
        </button>
        <ErrorNote error={errorText(invite.error)} />
        {invited?.sent && <p className="ok">Invitation e-mailed to {invited.email}.</p>}
        {invited?.link && (
          <Secret label="No mail server is set up: send this link yourself" value={invited.link} testId="invite-link" />
        )}
      </form>
      <ErrorNote error={errorText(data.error ?? changeError)} />
      <div className="table-wrap">
        <table className="stack-on-phone">
          <thead>
            <tr>
              <th>Name</th>
              <th>E-mail</th>
              <th>Role</th>
              <th>Sign-in</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.data?.members.map((m) => (
              <tr key={m.id} data-testid="member-row">
                <td data-label="Name">
                  <strong>{m.name}</strong>
                </td>
                <td data-label="E-mail" className="wrap">
                  {m.email ?? '—'}
                </td>
                <td data-label="Role">
                  <select
                    aria-label={`Role of ${m.name}`}
                    value={roleValue(m.role, m.custom_role)}
                    disabled={changeRole.isPending}
                    onChange={(e) => changeRole.mutate({ user_id: m.id, ...parseRole(e.target.value) })}
                  >
                    {m.role === 'owner' && session.user?.role !== 'owner' && <option value="owner">owner</option>}
                    {roleOptions}
                  </select>
                </td>
                <td data-label="Sign-in">
                  {[m.has_passkey && 'passkey', m.has_password && 'password + TOTP'].filter(Boolean).join(', ') || '—'}
                </td>
                <td data-label="" className="row-actions">
                  {m.id !== session.user?.id && (
                    <button
                      type="button"
                      className="danger small"
                      disabled={remove.isPending}
                      onClick={() =>
                        window.confirm(`Remove ${m.name} from the account? Their sessions and tokens end now.`) &&
                        remove.mutate({ user_id: m.id })
                      }
                    >
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {(data.data?.invitations.length ?? 0) > 0 && (
        <>
          <h2>Open invitations</h2>
          <ul className="list">
            {data.data?.invitations.map((i) => (
              <li key={i.id}>
                <span>
                  {i.email} as {i.role}, until <When at={i.expires_at} />
                </span>
                <button
                  type="button"
                  className="small"
                  disabled={withdraw.isPending}
                  onClick={() => withdraw.mutate({ id: i.id })}
                >
                  Withdraw
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </Page>
  );
}
