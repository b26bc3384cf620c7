import { useState } from 'react';
import { api, can } from '../api';
import { useSession } from '../session';
import { ErrorNote, Field, Page, useAction, useLoad } from '../ui';

interface CustomRole {
  id: string;
  name: string;
  permissions: string[];
}
interface Group {
  id: string;
  name: string;
  memberIds: string[];
  machineIds: string[];
}

export default function RolesGroupsPage() {
  const { session } = useSession();
  if (!can(session.user, 'members.manage')) {
    return (
      <Page title="Roles and groups">
        <p className="empty">This needs the members.manage permission.</p>
      </Page>
    );
  }
  return (
    <Page title="Roles and groups">
      <Roles />
      <Groups />
    </Page>
  );
}

function Roles() {
  const data = useLoad(() => api<{ permissions: string[]; roles: CustomRole[] }>('GET', '/api/roles'));
  const [name, setName] = useState('');
  const [perms, setPerms] = useState<string[]>([]);
  const action = useAction();
  const toggle = (p: string) => setPerms((ps) => (ps.includes(p) ? ps.filter((x) => x !== p) : [...ps, p]));
  return (
    <section>
      <h2>Custom roles</h2>
      <p className="intro">
        Owners and admins hold every permission; members can see machines and connect AI clients. A custom role gives a
        member exactly the permissions ticked.
      </p>
      <ErrorNote error={data.error ?? action.error} />
      <ul className="list">
        {data.data?.roles.map((r) => (
          <li key={r.id}>
            <span>
              <strong>{r.name}</strong>: {r.permissions.join(', ') || 'no permissions'}
            </span>
            <button
              type="button"
              className="danger small"
              onClick={() =>
                action.run(async () => {
                  await api('DELETE', `/api/roles/${r.id}`);
                  data.reload();
                })
              }
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
      <form
        className="card"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await api('POST', '/api/roles', { name, permissions: perms });
            setName('');
            setPerms([]);
            data.reload();
          });
        }}
      >
        <Field label="New role name">
          <input name="role-name" value={name} onChange={(e) => setName(e.target.value)} required />
        </Field>
        <fieldset className="checks">
          <legend>Permissions</legend>
          {data.data?.permissions.map((p) => (
            <label key={p}>
              <input type="checkbox" checked={perms.includes(p)} onChange={() => toggle(p)} /> {p}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={action.busy}>
          Create role
        </button>
      </form>
    </section>
  );
}

function Groups() {
  const groups = useLoad(() => api<{ groups: Group[] }>('GET', '/api/groups'));
  const members = useLoad(() => api<{ members: { id: string; name: string }[] }>('GET', '/api/members'));
  const machines = useLoad(() => api<{ machines: { id: string; name: string }[] }>('GET', '/api/machines'));
  const [editing, setEditing] = useState<Group | null>(null);
  const action = useAction();
  const blank: Group = { id: '', name: '', memberIds: [], machineIds: [] };
  const save = (g: Group) =>
    action.run(async () => {
      const body = { name: g.name, member_ids: g.memberIds, machine_ids: g.machineIds };
      if (g.id) await api('PUT', `/api/groups/${g.id}`, body);
      else await api('POST', '/api/groups', body);
      setEditing(null);
      groups.reload();
    });
  const nameOf = (list: { id: string; name: string }[] | undefined, id: string) =>
    list?.find((x) => x.id === id)?.name ?? id;
  return (
    <section>
      <h2>Groups</h2>
      <p className="intro">A group can claim machines: then only its members (and owners and admins) reach them.</p>
      <ErrorNote error={groups.error ?? action.error} />
      <ul className="list">
        {groups.data?.groups.map((g) => (
          <li key={g.id} data-testid="group-row">
            <span>
              <strong>{g.name}</strong> — members:{' '}
              {g.memberIds.map((id) => nameOf(members.data?.members, id)).join(', ') || 'none'}; claims:{' '}
              {g.machineIds.map((id) => nameOf(machines.data?.machines, id)).join(', ') || 'no machines'}
            </span>
            <span className="actions">
              <button type="button" className="small" onClick={() => setEditing(g)}>
                Edit
              </button>
              <button
                type="button"
                className="danger small"
                onClick={() =>
                  action.run(async () => {
                    await api('DELETE', `/api/groups/${g.id}`);
                    groups.reload();
                  })
                }
              >
                Delete
              </button>
            </span>
          </li>
        ))}
      </ul>
      {editing ? (
        <GroupForm
          group={editing}
          members={members.data?.members ?? []}
          machines={machines.data?.machines ?? []}
          busy={action.busy}
          onSave={save}
          onCancel={() => setEditing(null)}
        />
      ) : (
        <button type="button" onClick={() => setEditing(blank)}>
          New group
        </button>
      )}
    </section>
  );
}

function GroupForm(props: {
  group: Group;
  members: { id: string; name: string }[];
  machines: { id: string; name: string }[];
  busy: boolean;
  onSave: (g: Group) => void;
  onCancel: () => void;
}) {
  const [g, setG] = useState(props.group);
  const toggle = (key: 'memberIds' | 'machineIds', id: string) =>
    setG((x) => ({ ...x, [key]: x[key].includes(id) ? x[key].filter((y) => y !== id) : [...x[key], id] }));
  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSave(g);
      }}
    >
      <Field label="Group name">
        <input name="group-name" value={g.name} onChange={(e) => setG({ ...g, name: e.target.value })} required />
      </Field>
      <fieldset className="checks">
        <legend>Members</legend>
        {props.members.map((m) => (
          <label key={m.id}>
            <input type="checkbox" checked={g.memberIds.includes(m.id)} onChange={() => toggle('memberIds', m.id)} />{' '}
            {m.name}
          </label>
        ))}
      </fieldset>
      <fieldset className="checks">
        <legend>Claimed machines</legend>
        {props.machines.map((m) => (
          <label key={m.id}>
            <input type="checkbox" checked={g.machineIds.includes(m.id)} onChange={() => toggle('machineIds', m.id)} />{' '}
            {m.name}
          </label>
        ))}
      </fieldset>
      <div className="actions">
        <button type="submit" className="primary" disabled={props.busy}>
          Save group
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
