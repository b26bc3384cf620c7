import { accountSettingsEndpoints, tokenEndpoints } from '@letkite/protocol/api';
import { useEffect, useState } from 'react';
import { useApiMutation, useApiQuery } from '../queries';
import { useSession } from '../session';
import { ErrorNote, errorText, Page, When } from '../ui';

/**
 * The account switches (issue #14, owners only): transports and tool groups turned off for the whole account.
 * They apply to the next request of every session, no restart: an open MCP session stops at its next call.
 */
export default function AccountSettingsPage() {
  const { session } = useSession();
  const isOwner = session.user?.role === 'owner';
  const settings = useApiQuery(accountSettingsEndpoints.get, undefined, { enabled: isOwner });
  const groups = useApiQuery(tokenEndpoints.toolGroups);
  const save = useApiMutation(accountSettingsEndpoints.update, { invalidates: [accountSettingsEndpoints.get] });
  const s = settings.data?.settings;
  const [off, setOff] = useState<string[]>([]);
  useEffect(() => setOff(s?.disabled_tool_groups ?? []), [s]);
  if (!isOwner) {
    return (
      <Page title="Account settings">
        <p className="empty">Only the account's owners change its switches.</p>
      </Page>
    );
  }
  const toggle = (key: 'mcp_http' | 'stdio_bridge' | 'legacy_sse', label: string, hint: string) => (
    <label className="choice">
      <input
        type="checkbox"
        name={`switch-${key}`}
        checked={s?.[key] ?? true}
        disabled={!s || save.isPending}
        onChange={(e) => save.mutate({ [key]: e.target.checked })}
      />{' '}
      <strong>{label}</strong> <span className="hint">{hint}</span>
    </label>
  );
  return (
    <Page
      title="Account settings"
      intro="Switches for the whole account. They apply at once: an open AI session stops at its next call."
    >
      <ErrorNote error={errorText(settings.error ?? save.error)} />
      <section className="card">
        <h2>Transports</h2>
        {toggle('mcp_http', 'MCP over HTTP', 'AI clients connecting to /mcp directly')}
        {toggle('stdio_bridge', 'stdio bridge', 'clients started through `letkite mcp`')}
        {toggle('legacy_sse', 'Legacy SSE transport', 'the old HTTP+SSE transport, for clients that need it')}
      </section>
      <section className="card">
        <h2>Tool groups switched off</h2>
        <p className="hint">No connection of the account can use these: they leave the AI's tool list.</p>
        {groups.data?.groups.map((g) => (
          <label key={g.name} className="choice">
            <input
              type="checkbox"
              name="switch-group"
              value={g.name}
              checked={off.includes(g.name)}
              onChange={() => setOff(off.includes(g.name) ? off.filter((x) => x !== g.name) : [...off, g.name])}
            />{' '}
            {g.label}
          </label>
        ))}
        <button
          type="button"
          className="primary"
          data-testid="save-tool-groups"
          disabled={save.isPending}
          onClick={() => save.mutate({ disabled_tool_groups: off })}
        >
          Save tool groups
        </button>
      </section>
      {s?.updated_at && (
        <p className="hint">
          Last changed <When at={s.updated_at} /> by {s.updated_by}
        </p>
      )}
    </Page>
  );
}
