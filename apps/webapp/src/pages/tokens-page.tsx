import { machineListEndpoints, policyEndpoints, tokenEndpoints } from '@letkite/protocol/api';
import { useState } from 'react';
import { can } from '../api';
import { useApiMutation, useApiQuery } from '../queries';
import { useSession } from '../session';
import { ErrorNote, errorText, Field, Page, Secret, When } from '../ui';
import { VisibleText } from '../visible-value';

export default function TokensPage() {
  const { session } = useSession();
  const tokens = useApiQuery(tokenEndpoints.list);
  const machines = useApiQuery(machineListEndpoints.list);
  const groups = useApiQuery(tokenEndpoints.toolGroups);
  const create = useApiMutation(tokenEndpoints.create, { invalidates: [tokenEndpoints.list] });
  const revoke = useApiMutation(tokenEndpoints.revoke, { invalidates: [tokenEndpoints.list] });
  const [name, setName] = useState('');
  const [policy, setPolicy] = useState('read-only');
  // The account's policies by name; only the tool groups the chosen one can use are offered (issue #14).
  const policies = useApiQuery(policyEndpoints.list);
  const usable = policies.data?.policies.find((p) => p.name === policy)?.tool_groups ?? null;
  const offeredGroups = groups.data?.groups.filter((g) => usable === null || usable.includes(g.name)) ?? [];
  const [expires, setExpires] = useState('30d');
  // null = every machine / every tool the policy allows; otherwise the chosen ones.
  const [chosenMachines, setChosenMachines] = useState<string[] | null>(null);
  const [chosenGroups, setChosenGroups] = useState<string[] | null>(null);
  const toggle = (list: string[] | null, item: string) =>
    list?.includes(item) ? list.filter((x) => x !== item) : [...(list ?? []), item];
  const scopes = () =>
    chosenGroups === null
      ? '*'
      : [
          ...(groups.data?.base_tools ?? []),
          ...offeredGroups.filter((g) => chosenGroups.includes(g.name)).flatMap((g) => g.tools),
        ];
  const created = create.data?.token ?? null;
  return (
    <Page title="API tokens" intro="A token lets an MCP client act as you, bounded by the policy chosen here.">
      {can(session.user, 'clients.connect') ? (
        <form
          className="card inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate(
              {
                name,
                policy,
                machines: chosenMachines ?? '*',
                scopes: scopes(),
                ...(expires ? { expires } : {}),
              },
              {
                onSuccess: () => {
                  setName('');
                  setChosenMachines(null);
                  setChosenGroups(null);
                },
              },
            );
          }}
        >
          <h2>New token</h2>
          <Field label="Name">
            <input name="token-name" value={name} onChange={(e) => setName(e.target.value)} required />
          </Field>
          <Field label="Policy">
            <select name="token-policy" value={policy} onChange={(e) => setPolicy(e.target.value)}>
              {(policies.data?.policies ?? [{ name: 'read-only' }, { name: 'full' }]).map((p) => (
                <option key={p.name} value={p.name}>
                  {p.name}
                </option>
              ))}
            </select>
          </Field>
          <fieldset className="choices">
            <legend>Machines</legend>
            <label>
              <input
                type="radio"
                name="token-machines"
                checked={chosenMachines === null}
                onChange={() => setChosenMachines(null)}
              />{' '}
              All I can reach
            </label>
            <label>
              <input
                type="radio"
                name="token-machines"
                checked={chosenMachines !== null}
                onChange={() => setChosenMachines([])}
              />{' '}
              Only these:
            </label>
            {chosenMachines !== null &&
              machines.data?.machines.map((m) => (
                <label key={m.id} className="choice">
                  <input
                    type="checkbox"
                    name="token-machine"
                    value={m.id}
                    checked={chosenMachines.includes(m.id)}
                    onChange={() => setChosenMachines(toggle(chosenMachines, m.id))}
                  />{' '}
                  <VisibleText text={m.name} />
                </label>
              ))}
          </fieldset>
          <fieldset className="choices">
            <legend>Tools</legend>
            <label>
              <input
                type="radio"
                name="token-tools"
                checked={chosenGroups === null}
                onChange={() => setChosenGroups(null)}
              />{' '}
              All tools
            </label>
            <label>
              <input
                type="radio"
                name="token-tools"
                checked={chosenGroups !== null}
                onChange={() => setChosenGroups([])}
              />{' '}
              Only these groups:
            </label>
            {chosenGroups !== null &&
              offeredGroups.map((g) => (
                <label key={g.name} className="choice">
                  <input
                    type="checkbox"
                    name="token-group"
                    value={g.name}
                    checked={chosenGroups.includes(g.name)}
                    onChange={() => setChosenGroups(toggle(chosenGroups, g.name))}
                  />{' '}
                  {g.label}
                </label>
              ))}
          </fieldset>
          <Field label="Expires after">
            <select name="token-expires" value={expires} onChange={(e) => setExpires(e.target.value)}>
              <option value="1d">1 day</option>
              <option value="30d">30 days</option>
              <option value="365d">1 year</option>
              <option value="">never</option>
            </select>
          </Field>
          <button type="submit" className="primary" disabled={create.isPending}>
            Create token
          </button>
        </form>
      ) : (
        <p className="empty">Creating tokens needs the clients.connect permission.</p>
      )}
      <ErrorNote error={errorText(create.error ?? revoke.error ?? tokens.error)} />
      {created && <Secret label="Your new token (shown once)" value={created} testId="new-token" />}
      <ul className="list">
        {tokens.data?.tokens.map((t) => (
          <li key={t.id} className={t.revoked_at ? 'revoked' : ''}>
            <span>
              <strong>{t.name}</strong> · {typeof t.grant.policy === 'string' ? t.grant.policy : 'custom policy'} ·
              machines {t.grant.machines === '*' ? 'all' : t.grant.machines.length} · tools{' '}
              {t.grant.scopes === '*' ? 'all' : t.grant.scopes.length} · last used{' '}
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
                disabled={revoke.isPending}
                onClick={() => revoke.mutate({ id: t.id })}
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
