import {
  type AuditEventView,
  auditActions,
  auditEndpoints,
  connectionEndpoints,
  machineListEndpoints,
  memberEndpoints,
} from '@letkite/protocol/api';
import { useEffect, useMemo, useState } from 'react';
import { call } from '../../api';
import { useApiMutation, useApiQuery } from '../../queries';
import { useSession } from '../../session';
import { ErrorNote, errorText, Page, When } from '../../ui';
import { VisibleText } from '../../visible-value';
import { apiFilter, type Filters, isoOfLocalInput, localInputOf, searchOf, useUrlFilters } from './activity-filters';
import { CallsChart, outcomeKind } from './calls-chart';
import './activity.css';

const outcomes = ['ok', 'error', 'approval_pending', 'blocked_by_policy', 'blocked_by_ceiling', 'approval_denied'];

/**
 * A choice by name when the list is known, else a field for the id. A value from the URL that is not in the list
 * (a token's id, a removed person) stays selectable, so a shared link shows what it filters by.
 */
function PickOrType(props: {
  name: string;
  value: string | undefined;
  options: { id: string; name: string }[] | null;
  onChange: (v: string) => void;
}) {
  const { name, value, options, onChange } = props;
  if (!options)
    return <input id={`filter-${name}`} name={name} value={value ?? ''} onChange={(e) => onChange(e.target.value)} />;
  const known = value === undefined || options.some((o) => o.id === value);
  return (
    <select id={`filter-${name}`} name={name} value={value ?? ''} onChange={(e) => onChange(e.target.value)}>
      <option value="">anyone</option>
      {!known && <option value={value}>{value}</option>}
      {options.map((o) => (
        <option key={o.id} value={o.id}>
          {o.name}
        </option>
      ))}
    </select>
  );
}

/** The filter form; every change goes to the URL. */
function FilterBar(props: {
  filters: Filters;
  onChange: (f: Filters) => void;
  machines: { id: string; name: string }[];
  /** People and connections by name, when this person may list them; otherwise the fields take an id. */
  people: { id: string; name: string }[] | null;
  connections: { id: string; name: string }[] | null;
}) {
  const { filters, onChange } = props;
  const set = (key: keyof Filters, value: string | undefined) => onChange({ ...filters, [key]: value || undefined });
  return (
    <form className="card activity-filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
      <label>
        <span className="label">From</span>
        <input
          type="datetime-local"
          value={localInputOf(filters.since)}
          onChange={(e) => set('since', isoOfLocalInput(e.target.value))}
        />
      </label>
      <label>
        <span className="label">Until</span>
        <input
          type="datetime-local"
          value={localInputOf(filters.until)}
          onChange={(e) => set('until', isoOfLocalInput(e.target.value))}
        />
      </label>
      <label>
        <span className="label">Machine</span>
        <select name="machine" value={filters.machine ?? ''} onChange={(e) => set('machine', e.target.value)}>
          <option value="">any</option>
          {props.machines.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name}
            </option>
          ))}
          {filters.machine && !props.machines.some((m) => m.id === filters.machine) && (
            <option value={filters.machine}>{filters.machine}</option>
          )}
        </select>
      </label>
      <label>
        <span className="label">Tool</span>
        <input
          name="tool"
          value={filters.tool ?? ''}
          placeholder="exec"
          onChange={(e) => set('tool', e.target.value)}
        />
      </label>
      <label>
        <span className="label">Outcome</span>
        <select name="outcome" value={filters.outcome ?? ''} onChange={(e) => set('outcome', e.target.value)}>
          <option value="">any</option>
          {outcomes.map((o) => (
            <option key={o} value={o}>
              {o === 'error' ? 'any refusal or failure' : o}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span className="label">Action</span>
        <select name="action" value={filters.action ?? ''} onChange={(e) => set('action', e.target.value)}>
          <option value="">any</option>
          <option value="tool">tool calls</option>
          {auditActions.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </label>
      <label htmlFor="filter-person">
        <span className="label">{props.people ? 'Person' : 'Person (user id)'}</span>
        <PickOrType name="person" value={filters.person} options={props.people} onChange={(v) => set('person', v)} />
      </label>
      <label htmlFor="filter-connection">
        <span className="label">{props.connections ? 'Connection' : 'Connection or token id'}</span>
        <PickOrType
          name="connection"
          value={filters.connection}
          options={props.connections}
          onChange={(v) => set('connection', v)}
        />
      </label>
      <button type="button" className="secondary" onClick={() => onChange({})}>
        Clear filters
      </button>
    </form>
  );
}

/**
 * A row's details as indented JSON, one line at a time through VisibleText: JSON escapes control characters
 * already, and bidi or invisible ones it leaves alone are shown marked (the layout's own line breaks are not).
 */
function DetailsJson(props: { value: unknown }) {
  const lines = JSON.stringify(props.value, null, 2).split('\n');
  return (
    <pre className="arg-value">
      {lines.map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: lines are positional and never reordered
        <span key={i}>
          <VisibleText text={line} />
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

/** One row, and its full detail when opened. */
function ActivityRow(props: { e: AuditEventView; open: boolean; onToggle: () => void; live: boolean }) {
  const { e } = props;
  const who = e.user_name ?? e.user_id ?? e.actor;
  return (
    <li
      className={`activity-row outcome-${outcomeKind(e.outcome)}${props.live ? ' live' : ''}`}
      data-testid="activity-row"
      data-id={e.id}
    >
      <button type="button" className="row-summary" aria-expanded={props.open} onClick={props.onToggle}>
        <span className="when">
          <When at={e.at} />
        </span>
        <span className="what">
          <strong>{e.tool ?? e.action}</strong>
          {e.machine_name || e.machine_id ? (
            <>
              {' on '}
              <VisibleText text={e.machine_name ?? e.machine_id ?? ''} />
            </>
          ) : null}
        </span>
        <span className="who">
          <VisibleText text={who} />
          {e.client_name && (
            <span className="declared" title="as declared by the client">
              {' via '}
              <VisibleText text={e.client_name} />
            </span>
          )}
        </span>
        <span className={`badge outcome outcome-${outcomeKind(e.outcome)}`}>{e.outcome ?? 'ok'}</span>
      </button>
      {props.open && (
        <dl className="row-detail" data-testid="activity-detail">
          <dt>Row</dt>
          <dd>
            #{e.id} · {e.action} · <When at={e.at} />
            {e.duration_ms !== null && ` · ${e.duration_ms} ms`}
          </dd>
          <dt>Actor</dt>
          <dd>
            <code>{e.actor}</code>
            {e.credential_id && (
              <>
                {' · connection/token '}
                <code>{e.credential_id}</code>
              </>
            )}
          </dd>
          {e.decision && (
            <>
              <dt>Verdict</dt>
              <dd>{e.decision}</dd>
            </>
          )}
          {e.target && (
            <>
              <dt>Target</dt>
              <dd>
                <VisibleText text={e.target} />
              </dd>
            </>
          )}
          {e.request_id && (
            <>
              <dt>Request</dt>
              <dd>
                <code>{e.request_id}</code>
              </dd>
            </>
          )}
          <dt>Details</dt>
          <dd className="details">
            <DetailsJson value={e.details} />
          </dd>
          <dt>Chain</dt>
          <dd className="hash">
            <code title="this row's hash">{e.hash?.slice(0, 16) ?? '—'}</code>
            {' ← '}
            <code title="the previous row's hash">{e.prev_hash?.slice(0, 16) ?? '—'}</code>
          </dd>
        </dl>
      )}
    </li>
  );
}

/**
 * How long rows are kept. Owners and admins change it (pruning keeps the chain verifiable); others only see it.
 */
function RetentionCard() {
  const { session } = useSession();
  const settings = useApiQuery(auditEndpoints.settings);
  const save = useApiMutation(auditEndpoints.setSettings, {
    invalidates: [auditEndpoints.settings, auditEndpoints.list],
  });
  const [days, setDays] = useState('');
  const mayChange = session.user?.role === 'owner' || session.user?.role === 'admin';
  const current = settings.data?.retention_days;
  return (
    <section className="card" aria-label="Retention" data-testid="retention">
      <h2>Retention</h2>
      <p className="hint">
        {current === undefined
          ? 'Loading…'
          : current === null
            ? 'Every row is kept.'
            : `Rows older than ${current} day(s) are pruned every hour.`}{' '}
        Pruning keeps the chain verifiable: the last pruned row's hash stays as its anchor.
      </p>
      {mayChange && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate({ retention_days: Number(days) });
          }}
        >
          <input
            type="number"
            min={1}
            max={36500}
            required
            placeholder="days"
            aria-label="Keep rows for (days)"
            value={days}
            onChange={(e) => setDays(e.target.value)}
          />
          <button type="submit" disabled={save.isPending}>
            Keep for these days
          </button>
          <button
            type="button"
            className="secondary"
            disabled={save.isPending || current === null}
            onClick={() => save.mutate({ retention_days: null })}
          >
            Keep everything
          </button>
        </form>
      )}
      <ErrorNote error={errorText(settings.error) ?? errorText(save.error)} />
    </section>
  );
}

/**
 * The activity log: every tool call, admin action and sign-in of the account, newest first, with the filters in
 * the URL, new rows arriving live (server-sent events), each row's full detail, export, and calls per hour.
 */
export default function ActivityPage() {
  const [filters, setFilters] = useUrlFilters();
  const filter = useMemo(() => apiFilter(filters), [filters]);
  const machines = useApiQuery(machineListEndpoints.list);
  const members = useApiQuery(memberEndpoints.list);
  const connections = useApiQuery(connectionEndpoints.list);
  const people = members.data ? members.data.members.map((m) => ({ id: m.id, name: m.name })) : null;
  const connectionChoices = connections.data
    ? connections.data.connections.map((c) => ({
        id: c.id,
        name: `${c.client_name ?? c.client_id} (${c.user_name ?? c.user_id})`,
      }))
    : null;
  const first = useApiQuery(auditEndpoints.list, { ...filter, limit: 100 });
  const [older, setOlder] = useState<{ events: AuditEventView[]; cursor: string | null } | null>(null);
  // Live rows belong to the filter set they arrived for: a message the previous stream sent just before it was
  // closed must not show under the new filters.
  const [live, setLive] = useState<{ key: string; rows: AuditEventView[] }>({ key: '', rows: [] });
  const [connected, setConnected] = useState(false);
  const [open, setOpen] = useState<number | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const search = searchOf(filters);

  // A new filter set starts over: its own first page, its own live tail.
  useEffect(() => {
    setOlder(null);
    setLive({ key: search, rows: [] });
  }, [search]);

  useEffect(() => {
    const after = first.data?.events[0]?.id;
    if (first.data === undefined) return;
    const q = new URLSearchParams(search.slice(1));
    if (after !== undefined) q.set('after', String(after));
    const source = new EventSource(`/api/audit/stream?${q.toString()}`);
    source.addEventListener('ready', () => setConnected(true));
    source.addEventListener('audit', (m) => {
      const e = JSON.parse((m as MessageEvent<string>).data) as AuditEventView;
      setLive((prev) => {
        const rows = prev.key === search ? prev.rows : [];
        return { key: search, rows: rows.some((r) => r.id === e.id) ? rows : [e, ...rows].slice(0, 500) };
      });
    });
    source.onerror = () => setConnected(false);
    return () => source.close();
  }, [search, first.data]);

  const baseEvents = first.data?.events ?? [];
  const liveRows = live.key === search ? live.rows : [];
  const seen = new Set(baseEvents.map((e) => e.id));
  const events = [...liveRows.filter((e) => !seen.has(e.id)), ...baseEvents, ...(older?.events ?? [])];
  const cursor = older ? older.cursor : (first.data?.next_cursor ?? null);
  const liveIds = new Set(liveRows.map((e) => e.id));
  const exportHref = (format: 'jsonl' | 'csv') => {
    const q = new URLSearchParams(search.slice(1));
    q.set('format', format);
    return `/api/audit/export?${q.toString()}`;
  };

  return (
    <Page
      title="Activity"
      intro="Everything AI clients did on your machines, every admin change and every sign-in. Each row is chained to the one before it, so an edit in the database shows."
    >
      <FilterBar
        filters={filters}
        onChange={setFilters}
        machines={machines.data?.machines ?? []}
        people={people}
        connections={connectionChoices}
      />
      <div className="activity-toolbar">
        <span className={connected ? 'live-dot on' : 'live-dot'} data-testid="live-state">
          {connected ? 'Live' : 'Connecting…'}
        </span>
        <a className="button secondary" href={exportHref('jsonl')} download data-testid="export-jsonl">
          Export JSON lines
        </a>
        <a className="button secondary" href={exportHref('csv')} download data-testid="export-csv">
          Export CSV
        </a>
      </div>
      <CallsChart events={events} now={new Date()} />
      <ErrorNote error={errorText(first.error) ?? loadError} />
      {first.data && events.length === 0 && <p className="hint">Nothing matches these filters.</p>}
      <ul className="list activity-list">
        {events.map((e) => (
          <ActivityRow
            key={e.id}
            e={e}
            live={liveIds.has(e.id)}
            open={open === e.id}
            onToggle={() => setOpen(open === e.id ? null : e.id)}
          />
        ))}
      </ul>
      {cursor && (
        <button
          type="button"
          className="secondary"
          onClick={async () => {
            try {
              const page = await call(auditEndpoints.list, { ...filter, limit: 100, cursor });
              setOlder({ events: [...(older?.events ?? []), ...page.events], cursor: page.next_cursor });
              setLoadError(null);
            } catch (err) {
              setLoadError(errorText(err));
            }
          }}
        >
          Load older
        </button>
      )}
      <RetentionCard />
    </Page>
  );
}
