import {
  type GroupView,
  groupEndpoints,
  machineListEndpoints,
  memberEndpoints,
  type Permission,
  roleEndpoints,
} from '@letkite/protocol/api';
import { useState } from 'react';
import { can } from '../api';
import { useApiMutation, useApiQuery } from '../queries';
import { useSession } from '../session';
import { ErrorNote, errorText, Field, Page } from '../ui';
import { VisibleText } from '../visible-value';

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
  const data = useApiQuery(roleEndpoints.list);
  // A role's name shows in the members page's choices too.
  const invalidates = [roleEndpoints.list, memberEndpoints.list];
  const create = useApiMutation(roleEndpoints.create, { invalidates });
  const remove = useApiMutation(roleEndpoints.remove, { invalidates });
  const [name, setName] = useState('');
  const [perms, setPerms] = useState<Permission[]>([]);
  const toggle = (p: Permission) => setPerms((ps) => (ps.includes(p) ? ps.filter((x) => x !== p) : [...ps, p]));
  return (
    <section>
      <h2>Custom roles</h2>
      <p className="intro">
        Owners and admins hold every permission; members can see machines and connect AI clients. A custom role gives a
        member exactly the permissions ticked.
      </p>
      <ErrorNote error={errorText(data.error ?? create.error ?? remove.error)} />
      <ul className="list">
        {data.data?.roles.map((r) => (
          <li key={r.id}>
            <span>
              <strong>{r.name}</strong>: {r.permissions.join(', ') || 'no permissions'}
            </span>
            <button
              type="button"
              className="danger small"
              disabled={remove.isPending}
              onClick={() => remove.mutate({ id: r.id })}
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
          create.mutate(
            { name, permissions: perms },
            {
              onSuccess: () => {
                setName('');
                setPerms([]);
              },
            },
          );
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
        <button type="submit" disabled={create.isPending}>
          Create role
        </button>
      </form>
    </section>
  );
}

const blank: GroupView = { id: '', name: '', member_ids: [], machine_ids: [] };

function Groups() {
  const groups = useApiQuery(groupEndpoints.list);
  const members = useApiQuery(memberEndpoints.list);
  const machines = useApiQuery(machineListEndpoints.list);
  // A group's claims change who reaches which machine: the machine lists show "claimed by".
  const invalidates = [groupEndpoints.list, machineListEndpoints.list];
  const create = useApiMutation(groupEndpoints.create, { invalidates });
  const update = useApiMutation(groupEndpoints.update, { invalidates });
  const remove = useApiMutation(groupEndpoints.remove, { invalidates });
  const [editing, setEditing] = useState<GroupView | null>(null);
  const save = (g: GroupView) => {
    const body = { name: g.name, member_ids: g.member_ids, machine_ids: g.machine_ids };
    const done = { onSuccess: () => setEditing(null) };
    if (g.id) update.mutate({ id: g.id, ...body }, done);
    else create.mutate(body, done);
  };
  const nameOf = (list: { id: string; name: string }[] | undefined, id: string) =>
    list?.find((x) => x.id === id)?.name ?? id;
  return (
    <section>
      <h2>Groups</h2>
      <p className="intro">A group can claim machines: then only its members (and owners and admins) reach them.</p>
      <ErrorNote error={errorText(groups.error ?? create.error ?? update.error ?? remove.error)} />
      <ul className="list">
        {groups.data?.groups.map((g) => (
          <li key={g.id} data-testid="group-row">
            <span>
              <strong>{g.name}</strong> — members:{' '}
              {g.member_ids.map((id) => nameOf(members.data?.members, id)).join(', ') || 'none'}; claims:{' '}
              <VisibleText
                text={g.machine_ids.map((id) => nameOf(machines.data?.machines, id)).join(', ') || 'no machines'}
              />
            </span>
            <span className="actions">
              <button type="button" className="small" onClick={() => setEditing(g)}>
                Edit
              </button>
              <button
                type="button"
                className="danger small"
                disabled={remove.isPending}
                onClick={() => remove.mutate({ id: g.id })}
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
          busy={create.isPending || update.isPending}
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
  group: GroupView;
  members: { id: string; name: string }[];
  machines: { id: string; name: string }[];
  busy: boolean;
  onSave: (g: GroupView) => void;
  onCancel: () => void;
}) {
  const [g, setG] = useState(props.group);
  const toggle = (key: 'member_ids' | 'machine_ids', id: string) =>
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
            <input type="checkbox" checked={g.member_ids.includes(m.id)} onChange={() => toggle('member_ids', m.id)} />{' '}
            {m.name}
          </label>
        ))}
      </fieldset>
      <fieldset className="checks">
        <legend>Claimed machines</legend>
        {props.machines.map((m) => (
          <label key={m.id}>
            <input
              type="checkbox"
              checked={g.machine_ids.includes(m.id)}
              onChange={() => toggle('machine_ids', m.id)}
            />{' '}
            <VisibleText text={m.name} />
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
