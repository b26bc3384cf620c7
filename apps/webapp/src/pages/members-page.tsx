import { useState } from 'react';
import { api, can } from '../api';
import { useSession } from '../session';
import { ErrorNote, Field, Page, Secret, useAction, useLoad, When } from '../ui';

interface Member {
  id: string;
  name: string;
  email: string | null;
  role: string;
  custom_role: { id: string; name: string } | null;
  joined_at: string;
  has_passkey: boolean;
  has_password: boolean;
}
interface Invitation {
  id: string;
  email: string;
  role: string;
  expires_at: string;
}
interface CustomRole {
  id: string;
  name: string;
  permissions: string[];
}

/** A role choice: a built-in role, or `member` with a custom role (`custom:<id>`). */
function roleValue(role: string, custom: { id: string } | null): string {
  return custom ? `custom:${custom.id}` : role;
}
function parseRole(value: string): { role: string; custom_role_id: string | null } {
  return value.startsWith('custom:')
    ? { role: 'member', custom_role_id: value.slice(7) }
    : { role: value, custom_role_id: null };
}

export default function MembersPage() {
  const { session } = useSession();
  const data = useLoad(() => api<{ members: Member[]; invitations: Invitation[] }>('GET', '/api/members'));
  const roles = useLoad(() => api<{ roles: CustomRole[] }>('GET', '/api/roles'));
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const [link, setLink] = useState<string | null>(null);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const action = useAction();
  if (!can(session.user, 'members.manage')) {
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
  return (
    <Page title="Members" intro="People in this account and what they may do.">
      <form
        className="card inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const r = await api<{ sent: boolean; link?: string }>('POST', '/api/invitations', {
              email,
              ...parseRole(role),
            });
            setLink(r.link ?? null);
            setSentTo(r.sent ? email : null);
            setEmail('');
            data.reload();
          });
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
        <button type="submit" className="primary" disabled={action.busy}>
          Send invitation
        </button>
        <ErrorNote error={action.error} />
        {sentTo && <p className="ok">Invitation e-mailed to {sentTo}.</p>}
        {link && <Secret label="No mail server is set up: send this link yourself" value={link} testId="invite-link" />}
      </form>
      <ErrorNote error={data.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>E-mail</th>
              <th>Role</th>
              <th>Sign-in</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {data.data?.members.map((m) => (
              <tr key={m.id} data-testid="member-row">
                <td>{m.name}</td>
                <td>{m.email}</td>
                <td>
                  <select
                    aria-label={`Role of ${m.name}`}
                    value={roleValue(m.role, m.custom_role)}
                    onChange={(e) =>
                      action.run(async () => {
                        await api('PATCH', `/api/members/${m.id}`, parseRole(e.target.value));
                        data.reload();
                      })
                    }
                  >
                    {m.role === 'owner' && session.user?.role !== 'owner' && <option value="owner">owner</option>}
                    {roleOptions}
                  </select>
                </td>
                <td>
                  {[m.has_passkey && 'passkey', m.has_password && 'password + TOTP'].filter(Boolean).join(', ') || '—'}
                </td>
                <td>
                  {m.id !== session.user?.id && (
                    <button
                      type="button"
                      className="danger small"
                      onClick={() =>
                        window.confirm(`Remove ${m.name} from the account? Their sessions and tokens end now.`) &&
                        action.run(async () => {
                          await api('DELETE', `/api/members/${m.id}`);
                          data.reload();
                        })
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
                  onClick={() =>
                    action.run(async () => {
                      await api('DELETE', `/api/invitations/${i.id}`);
                      data.reload();
                    })
                  }
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
